// Spec floor on PostgreSQL for pg-admin-write and pg-admin-read: a bare node:http server doing,
// per request, the user sync (one platform lookup, bench/lib/userLookup.ts) and then what the
// database must do for the request, in the database named by DATABASE_URL, on a pool of the
// adapter's size with the adapter's connection settings (src/store/postgresPool.ts). The events
// table is the adapter's own (its migration), so the insert maintains the same indexes.
//
// - MODE=write (POST /adm/vip/submit): one event inserted durably in its own transaction, as
//   COMMIT says. `adapter`: as the adapter commits an append: BEGIN and the append lock in one
//   round trip, the adapter's INSERT (positions drawn under the lock, pg_notify), COMMIT; so
//   commits go one at a time across every process on the database. Diagnostics, for what each
//   part costs (neither is what the adapter may do): `plain`, BEGIN, an INSERT drawing its
//   position from the sequence, COMMIT, so commits overlap and share WAL flushes; `notify`, the
//   same INSERT notifying as the adapter's does (PostgreSQL queues notifying commits one at a
//   time); `adapter-async`, the adapter's way with synchronous_commit off for the transaction (the
//   commit does not wait for its WAL flush: what the lock's hold time is without the disk).
// - MODE=read (GET /adm/vip/:oId): the user's events read from the table by stream, as
//   readStream reads a stream (SEED=1 first writes two VIP events for each of BENCH_USERS users).
//
// Answers the same small JSON bodies as the SQLite floor. Prints `READY {"url"}`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openPool } from '../../src/store/postgresPool.js';
import { APPEND_LOCK, migrate } from '../../src/store/postgresSchema.js';
import { transaction } from '../../src/store/postgresTransaction.js';
import { userLookup } from '../lib/userLookup.js';
import { benchOid } from '../lib/users.js';

const mode = process.env.MODE === 'read' ? 'read' : 'write';
const commit = (['adapter', 'adapter-async', 'notify', 'plain'] as const).find((c) => c === process.env.COMMIT) ?? 'adapter';
const PRELUDE = {
  adapter: `SELECT pg_advisory_xact_lock(${APPEND_LOCK})`,
  'adapter-async': `SET LOCAL synchronous_commit = off; SELECT pg_advisory_xact_lock(${APPEND_LOCK})`,
  notify: '',
  plain: '',
}[commit];
const users = Number(process.env.BENCH_USERS ?? 1000);
const platform = userLookup(process.env.SIM_URL!);
const { pool } = openPool(process.env.DATABASE_URL!);
await migrate(pool);

// The adapter's append statement (src/store/postgres.ts), for a one-event append.
const ADAPTER_INSERT = `
  WITH drawn AS MATERIALIZED (SELECT setval('events_seq', nextval('events_seq') + $1 - 1) AS last),
  inserted AS (
    INSERT INTO events (position, stream, revision, type, data, metadata, created)
    SELECT drawn.last - $1 + e.n, e.stream, e.revision, e.type, e.data, e.metadata, statement_timestamp()
    FROM unnest($2::text[], $3::int[], $4::text[], $5::json[], $6::json[]) WITH ORDINALITY AS e(stream, revision, type, data, metadata, n), drawn
    RETURNING position
  )
  SELECT max(position) AS position, pg_notify('community_bridge_floor', max(position)::text) FROM inserted`;
const PLAIN_INSERT = `
  INSERT INTO events (position, stream, revision, type, data, metadata, created)
  VALUES (nextval('events_seq'), $1, $2, $3, $4, NULL, statement_timestamp())
  RETURNING position`;
// Without the lock the adapter's setval would hand one position out twice: nextval, and the notification.
const NOTIFYING_INSERT = `
  WITH inserted AS (${PLAIN_INSERT})
  SELECT position, pg_notify('community_bridge_floor', position::text) FROM inserted`;

/** Revisions of this process's streams: each (stream, revision) is new, as the unique index requires. */
const revisions = new Map<string, number>();

async function insertDurably(oId: string, event: object): Promise<number> {
  const stream = `floor-${process.pid}-${oId}`;
  const revision = (revisions.get(stream) ?? -1) + 1;
  revisions.set(stream, revision);
  const data = JSON.stringify(event);
  const { rows } = await transaction(pool, PRELUDE, (client) =>
    commit === 'adapter' || commit === 'adapter-async'
      ? client.query<{ position: number }>(ADAPTER_INSERT, [1, [stream], [revision], ['VipRenewed'], [data], [null]])
      : client.query<{ position: number }>(commit === 'notify' ? NOTIFYING_INSERT : PLAIN_INSERT, [stream, revision, 'VipRenewed', data]),
  );
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
