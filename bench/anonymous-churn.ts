// `npx tsx bench/anonymous-churn.ts [--connections 10000] [--concurrency 50]`
//
// How much the log keeps of anonymous churn: a service on SQLite (in this process) and the
// community simulator; N anonymous clients each open GET /api/realtime, read their PB_CONNECT
// and leave. Counts the events and the bytes in the store before the churn, right after it, and
// after the retention has run: the service runs with the default ANONYMOUS_RETENTION_MS and a
// clock the bench moves past it once the churn is over. Bytes are the database's pages in use
// (page_count − freelist_count), which is what the file grows by; freed pages are reused by later
// appends.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createSimulator, SIMULATOR_KEY } from '../src/community/simulator.js';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/main.js';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '50' } } });
const total = Number(values.connections);
const concurrency = Number(values.concurrency);

/** One anonymous visit: connect, wait for the first frame, leave. */
const visit = (url: string) =>
  new Promise<void>((resolve, reject) => {
    const req = request(`${url}/api/realtime`, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', reject);
    req.end();
  });

const dataDir = mkdtempSync(join(tmpdir(), 'bench-churn-'));
const sim = await createSimulator({ users: [] }).listen();
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs).toISOString() };
// What the log keeps per connect, not how fast one address may connect: the rates of connects are off.
const config = loadConfig({
  PORT: '0',
  DATA_DIR: dataDir,
  COMMUNITY_URL: sim.url,
  COMMUNITY_KEY: SIMULATOR_KEY,
  LOG_LEVEL: 'silent',
  REALTIME_CONNECTS_PER_SECOND: '0',
  REALTIME_CONNECTS_PER_NODE_PER_SECOND: '0',
});
const service = await startService(config, { clock });
const probe = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
const measure = () => {
  const events = (probe.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  const pages = probe.pragma('page_count', { simple: true }) as number;
  const free = probe.pragma('freelist_count', { simple: true }) as number;
  const pageSize = probe.pragma('page_size', { simple: true }) as number;
  return { events, bytes: (pages - free) * pageSize };
};
const store = service.deps.store;
// The newest event is kept by a deletion (the head never moves back): end on an unrelated one.
const marker = () => store.append(`bench-${Date.now()}`, [{ type: 'BenchMarker', data: {} }]);
const settle = async () => {
  await marker();
  await service.deps.runner.waitFor(await store.headPosition());
  // Disconnects are recorded asynchronously: wait until every client has left.
  while (service.deps.readModels.clients.size > 0) await new Promise((r) => setTimeout(r, 50));
  await marker();
  await service.deps.runner.waitFor(await store.headPosition());
};

await settle();
const before = measure();
const started = Date.now();
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      next++;
      await visit(service.url);
    }
  }),
);
await settle();
const churned = measure();
offsetMs = config.anonymousRetentionMs + 1000;
const deleted = await service.retention.runOnce();
await marker();
const retained = measure();
const seconds = (Date.now() - started) / 1000;

const row = (label: string, m: { events: number; bytes: number }) => `| ${label} | ${m.events - before.events} | ${((m.bytes - before.bytes) / 1024).toFixed(1)} KiB |`;
console.log(
  `${total} anonymous connect/disconnects in ${seconds.toFixed(1)} s (concurrency ${concurrency}); ${deleted} streams deleted by the retention (${config.anonymousRetentionMs} ms)`,
);
console.log('| | events added | store bytes added |');
console.log('|---|---|---|');
console.log(row('after the churn', churned));
console.log(row('after the retention ran', retained));
console.log("(the rows include the bench's own 3 marker events)");

probe.close();
await service.close();
await sim.close();
rmSync(dataDir, { recursive: true, force: true });
