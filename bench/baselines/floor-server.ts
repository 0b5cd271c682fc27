// Spec floor for admin-write and admin-read: a bare node:http server that does only what the
// service's spec forces on every request, so "service ÷ floor" says how much of the gap to the
// bare baselines the spec itself accounts for.
//
// - Every request: the user sync, one lookup of the user on the platform (GET
//   /api/user/getInfoById?userId=<oId> on SIM_URL) over keep-alive sockets of an undici Pool,
//   the kind of client the service's fishpi adapter uses. An unknown user answers 404.
// - MODE=write (POST /adm/vip/submit): then one durable insert into DB_FILE (better-sqlite3, WAL,
//   synchronous=FULL) with group commit, as the service's writer thread does it: the commit runs
//   on a worker thread so its fsync does not stop the event loop; inserts that arrive while a
//   commit is in flight form the next transaction, and each answer waits for its own commit.
// - MODE=read (GET /adm/vip/:oId): then the user's records from a Map (BENCH_USERS users).
//
// Answers the same small JSON bodies as the bare baselines. Prints `READY {"url"}`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { userLookup } from '../lib/userLookup.js';
import { benchVipRecords } from '../lib/users.js';

const mode = process.env.MODE === 'read' ? 'read' : 'write';
const platform = userLookup(process.env.SIM_URL!);
const lookUp = platform.lookUp;

// Plain JavaScript (`eval`), as the service's writer is, so the worker needs no loader hooks.
const WRITER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS vip (id INTEGER PRIMARY KEY, oId TEXT NOT NULL, quality TEXT NOT NULL, expired TEXT NOT NULL, created TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO vip (oId, quality, expired, created) VALUES (?, ?, ?, ?)');
const commit = db.transaction((rows) => rows.map((row) => Number(insert.run(...row).lastInsertRowid)));
parentPort.on('message', (rows) => parentPort.postMessage(commit(rows)));
parentPort.postMessage('ready');
`;

type InsertRow = [oId: string, quality: string, expired: string, created: string];
interface PendingInsert {
  row: InsertRow;
  committed(id: number): void;
}

let writer: Worker | undefined;
let queued: PendingInsert[] = [];
let inFlight: PendingInsert[] | undefined;

/** Sends what queued up as one transaction, unless a commit is in flight (its reply sends it). */
function commitNext(): void {
  if (inFlight || queued.length === 0) return;
  inFlight = queued;
  queued = [];
  writer!.postMessage(inFlight.map((p) => p.row));
}

function insertDurably(row: InsertRow): Promise<number> {
  return new Promise((committed) => {
    queued.push({ row, committed });
    commitNext();
  });
}

if (mode === 'write') {
  writer = new Worker(WRITER_SOURCE, { eval: true, workerData: { file: process.env.DB_FILE!, driver: createRequire(import.meta.url).resolve('better-sqlite3') }, execArgv: [] });
  writer.on('error', (error) => {
    process.stderr.write(`writer failed: ${error.stack ?? error}\n`);
    process.exit(1);
  });
  await new Promise<void>((ready) => writer!.once('message', () => ready()));
  writer.on('message', (ids: number[]) => {
    const batch = inFlight!;
    inFlight = undefined;
    commitNext();
    for (const [i, pending] of batch.entries()) pending.committed(ids[i]!);
  });
}

const records = mode === 'read' ? benchVipRecords(Number(process.env.BENCH_USERS ?? 1000)) : new Map<string, object[]>();

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
  if (!(await lookUp(body.oId))) return json(res, 404, { code: -1, msg: 'no such user' });
  const created = new Date().toISOString();
  const id = await insertDurably([body.oId, body.quality, body.expired, created]);
  json(res, 200, { code: 0, msg: 'success', data: { id: String(id), userId: body.oId, quality: body.quality, expired: `${body.expired}.000Z`, created, updated: created } });
}

async function read(oId: string, res: ServerResponse): Promise<void> {
  if (!(await lookUp(oId))) return json(res, 404, { code: -1, msg: 'no such user' });
  json(res, 200, { code: 0, msg: 'success', data: records.get(oId) ?? [] });
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
    if (!res.headersSent) json(res, 502, { code: -1, msg: 'platform call failed' });
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void Promise.all([platform.close(), writer?.terminate()]).finally(() => process.exit(0));
});
