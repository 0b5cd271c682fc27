// Baseline for fanout and sse-capacity: a bare node:http SSE broadcaster. GET /api/realtime?oId=
// holds a connection and writes a PB_CONNECT frame; POST /adm/message/push {oIds, name, data}
// writes the frame the service writes (`id`, `event: message`, `data: {"app_id","name","data"}`) to
// every connection of every named oId. No auth, no log, no store. Prints `READY {"url"}`.
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const byOid = new Map<string, Set<ServerResponse>>();
let lastId = 0;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'GET' && url.pathname === '/api/realtime') {
    const oId = url.searchParams.get('oId') ?? '';
    req.socket.setNoDelay(true);
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    const clientId = randomBytes(24).toString('base64url');
    res.write(`id: ${++lastId}\nevent: PB_CONNECT\ndata: ${JSON.stringify({ client_id: clientId, login_status: oId !== '' })}\n\n`);
    let set = byOid.get(oId);
    if (!set) {
      set = new Set();
      byOid.set(oId, set);
    }
    set.add(res);
    res.on('close', () => set.delete(res));
    return;
  }
  if (req.method === 'POST' && url.pathname === '/adm/message/push') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { oIds: string[]; name: string; data: unknown };
      const frame = `id: ${++lastId}\nevent: message\ndata: ${JSON.stringify({ app_id: 'bench', name: body.name, data: body.data })}\n\n`;
      for (const oId of body.oIds) for (const target of byOid.get(oId) ?? []) target.write(frame);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0,"msg":"success"}');
    });
    return;
  }
  res.writeHead(404).end();
});
server.listen(0, '127.0.0.1', 4096, () => {
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
