// One timed replay of a store (its own process). Argument: JSON {dataDir, mode, connectionString?}:
// - `runner`: the service's start-up path (openCore: the store's adapter → ProjectionRunner
//   catch-up over createReadModels()), i.e. what `projections rebuild` does; on the SQLite file in
//   dataDir, or with `connectionString` on that PostgreSQL database;
// - `baseline`: a raw better-sqlite3 scan of the same table, JSON.parse per row (paged raw rows:
//   better-sqlite3's quickest plain read, faster than .iterate() or row objects);
// - `pg-baseline`: a raw node-postgres scan of the PostgreSQL table: the same pages by position
//   as the runner reads, one prepared statement, rows as arrays, each row's JSON parsed by the
//   driver (the json column's own parser), on one connection.
// Prints `RESULT {events, seconds, eventsPerS, rssRestMb, rssPeakMb}`.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { serviceModule } from './lib/build.js';
import { memoryOf } from './lib/proc.js';

// The compiled service when the bench built it, as a restart of a deployment runs it.
const { loadConfig } = (await import(serviceModule('config.js'))) as typeof import('../src/config.js');
const { openCore } = (await import(serviceModule('core.js'))) as typeof import('../src/core.js');
const { CATCH_UP_PAGE } = (await import(serviceModule('projections/runner.js'))) as typeof import('../src/projections/runner.js');

const { dataDir, mode, connectionString } = JSON.parse(process.argv[2]!) as { dataDir: string; mode: 'runner' | 'baseline' | 'pg-baseline'; connectionString?: string };
const file = join(dataDir, 'events.sqlite');
const rest = memoryOf(process.pid).rssKb;
let events = 0;
let seconds: number;
const cpuBefore = process.cpuUsage();
const started = performance.now();
if (mode === 'runner') {
  const core = await openCore(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...(connectionString && { EVENTSTORE_CONNECTION_STRING: connectionString }) }));
  events = core.runner.position;
  seconds = (performance.now() - started) / 1000;
  await core.runner.stop();
  await core.store.close();
} else if (mode === 'pg-baseline') {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const page = {
    name: 'replay-page',
    text: 'SELECT position, stream, revision, type, data, metadata, created FROM events WHERE position > $1 ORDER BY position LIMIT $2',
    rowMode: 'array' as const,
  };
  let after = '0';
  for (;;) {
    const { rows } = await client.query<[string, string, number, string, unknown, unknown, Date]>({ ...page, values: [after, CATCH_UP_PAGE] });
    for (const row of rows) if (row[4] !== null) events++;
    if (rows.length < CATCH_UP_PAGE) break;
    after = rows[rows.length - 1]![0];
  }
  seconds = (performance.now() - started) / 1000;
  await client.end();
} else {
  // The quickest plain way to read the table: pages of raw rows (arrays, not objects) by
  // position, as many rows per call as the runner reads, and JSON.parse of each row's data.
  const db = new Database(file, { readonly: true });
  const page = db.prepare('SELECT position, stream, revision, type, data, metadata, created FROM events WHERE position > ? ORDER BY position LIMIT ?').raw();
  let after = 0;
  for (;;) {
    const rows = page.all(after, CATCH_UP_PAGE) as Array<[number, string, number, string, string, string | null, string]>;
    for (const row of rows) if (JSON.parse(row[4]) !== null) events++;
    if (rows.length < CATCH_UP_PAGE) break;
    after = rows[rows.length - 1]![0];
  }
  seconds = (performance.now() - started) / 1000;
  db.close();
}
const peak = memoryOf(process.pid).hwmKb;
const { user, system } = process.cpuUsage(cpuBefore);
process.stdout.write(`RESULT ${JSON.stringify({ events, seconds, eventsPerS: events / seconds, cpuS: (user + system) / 1e6, rssRestMb: rest / 1024, rssPeakMb: peak / 1024 })}\n`);
