// Spec floor on PostgreSQL for pg-admin-write and pg-admin-read: a bare node:http server doing,
// per request, the user sync (one platform lookup, bench/lib/userLookup.ts) and then what the
// database must do for the request, in the database named by DATABASE_URL, with the adapter's
// connection settings (src/store/postgresPool.ts) on a pool of POOL_SIZE connections (the load's
// connections: no request waits for a connection). The events table is the adapter's own (its
// migration), so the insert maintains the same indexes.
//
// - MODE=write (POST /adm/vip/submit): one event inserted durably, one INSERT in autocommit (its
//   position from the sequence; the answer after its commit's WAL flush, synchronous_commit on).
//   No lock, no NOTIFY, nothing of the adapter's design: commits overlap and share WAL flushes.
// - MODE=read (GET /adm/vip/:oId): the user's events read from the table by stream, as
//   readStream reads a stream (SEED=1 first writes two VIP events for each of BENCH_USERS users).
//
// Answers the same small JSON bodies as the SQLite floor. Prints `READY {"url"}`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openPool } from '../../src/store/postgresPool.js';
import { migrate } from '../../src/store/postgresSchema.js';
import { userLookup } from '../lib/userLookup.js';
import { benchOid } from '../lib/users.js';

const mode = process.env.MODE === 'read' ? 'read' : 'write';
const users = Number(process.env.BENCH_USERS ?? 1000);
const platform = userLookup(process.env.SIM_URL!);
const { pool } = openPool(process.env.DATABASE_URL!, { max: Number(process.env.POOL_SIZE ?? 64) });
await migrate(pool);

const INSERT = `
  INSERT INTO events (position, stream, revision, type, data, metadata, created)
  VALUES (nextval('events_seq'), $1, $2, $3, $4, NULL, statement_timestamp())
  RETURNING position`;

/** Revisions of this process's streams: each (stream, revision) is new, as the unique index requires. */
const revisions = new Map<string, number>();

async function insertDurably(oId: string, event: object): Promise<number> {
  const stream = `floor-${process.pid}-${oId}`;
  const revision = (revisions.get(stream) ?? -1) + 1;
  revisions.set(stream, revision);
  const { rows } = await pool.query<{ position: number }>(INSERT, [stream, revision, 'VipRenewed', JSON.stringify(event)]);
  return rows[0]!.position;
}

const vipStream = (oId: string) => `vip-${oId}`;

if (mode === 'read' && process.env.SEED === '1') {
  const at = '2026-01-01T00:00:00.000Z';
  const rows = Array.from({ length: users }, (_, i) =>
    ['svip', 'vip'].map((quality, revision) => ({
      stream: vipStream(benchOid(i)),
      revision,
      data: JSON.stringify({
        recordId: `r${String(i * 2 + revision).padStart(14, '0')}`,
        userId: `u${String(i).padStart(14, '0')}`,
        quality,
        expired: '2030-01-01T00:00:00.000Z',
        at,
      }),
    })),
  ).flat();
  await pool.query(
    `INSERT INTO events (position, stream, revision, type, data, metadata, created)
     SELECT nextval('events_seq'), e.stream, e.revision, 'VipGranted', e.data, NULL, now()
     FROM unnest($1::text[], $2::int[], $3::json[]) AS e(stream, revision, data)`,
    [rows.map((r) => r.stream), rows.map((r) => r.revision), rows.map((r) => r.data)],
  );
  await pool.query('VACUUM ANALYZE events');
}

const json = (res: ServerResponse, status: number, value: object) => {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
};

async function submit(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let body: { oId?: unknown; quality?: unknown; expired?: unknown };
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return json(res, 400, { code: -1, msg: 'bad json' });
  }
  if (typeof body.oId !== 'string' || typeof body.quality !== 'string' || typeof body.expired !== 'string') return json(res, 400, { code: -1, msg: 'bad body' });
  if (!(await platform.lookUp(body.oId))) return json(res, 404, { code: -1, msg: 'no such user' });
  const created = new Date().toISOString();
  const id = await insertDurably(body.oId, { userId: body.oId, quality: body.quality, expired: body.expired, at: created });
  json(res, 200, { code: 0, msg: 'success', data: { id: String(id), userId: body.oId, quality: body.quality, expired: `${body.expired}.000Z`, created, updated: created } });
}

interface StreamRow {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: { recordId: string; userId: string; quality: string; expired: string; at: string };
  metadata: unknown;
  created: Date;
}

async function read(oId: string, res: ServerResponse): Promise<void> {
  if (!(await platform.lookUp(oId))) return json(res, 404, { code: -1, msg: 'no such user' });
  const { rows } = await pool.query<StreamRow>('SELECT position, stream, revision, type, data, metadata, created FROM events WHERE stream = $1 ORDER BY revision', [
    vipStream(oId),
  ]);
  const data = rows.map(({ data: r, created }) => ({
    id: r.recordId,
    userId: r.userId,
    quality: r.quality,
    expired: r.expired,
    created: created.toISOString(),
    updated: created.toISOString(),
  }));
  json(res, 200, { code: 0, msg: 'success', data });
}

const PREFIX = '/adm/vip/';
const server = createServer((req, res) => {
  const handled =
    mode === 'write' && req.method === 'POST' && req.url === '/adm/vip/submit'
      ? submit(req, res)
      : mode === 'read' && req.method === 'GET' && req.url?.startsWith(PREFIX)
        ? read(req.url.slice(PREFIX.length), res)
        : undefined;
  if (!handled) {
    res.writeHead(404).end();
    return;
  }
  handled.catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    if (!res.headersSent) json(res, 502, { code: -1, msg: 'platform or database call failed' });
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void Promise.all([platform.close(), pool.end()]).finally(() => process.exit(0));
});
