// Baseline for admin-read: a bare node:http server answering GET /adm/vip/:oId with the same
// JSON the service answers, from a Map filled at start for BENCH_USERS users. Prints `READY {"url"}`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchVipRecords } from '../lib/users.js';

const records = benchVipRecords(Number(process.env.BENCH_USERS ?? 1000));

const PREFIX = '/adm/vip/';
const server = createServer((req, res) => {
  const list = req.method === 'GET' && req.url?.startsWith(PREFIX) ? records.get(req.url.slice(PREFIX.length)) : undefined;
  if (!list) {
    res.writeHead(404).end();
    return;
  }
  const answer = JSON.stringify({ code: 0, msg: 'success', data: list });
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) }).end(answer);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
