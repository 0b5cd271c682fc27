// One timed replay of a store (its own process). Argument: JSON {dataDir, mode}:
// - `runner`: the service's start-up path (openCore: SQLite adapter → ProjectionRunner catch-up
//   over createReadModels()), i.e. what `projections rebuild` does;
// - `baseline`: a raw better-sqlite3 scan of the same table, JSON.parse per row (paged raw rows:
//   better-sqlite3's quickest plain read, faster than .iterate() or row objects).
// Prints `RESULT {events, seconds, eventsPerS, rssRestMb, rssPeakMb}`.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { openCore } from '../src/core.js';
import { CATCH_UP_PAGE } from '../src/projections/runner.js';
import { memoryOf } from './lib/proc.js';

const { dataDir, mode } = JSON.parse(process.argv[2]!) as { dataDir: string; mode: 'runner' | 'baseline' };
const file = join(dataDir, 'events.sqlite');
const rest = memoryOf(process.pid).rssKb;
let events = 0;
const cpuBefore = process.cpuUsage();
const started = performance.now();
if (mode === 'runner') {
  const core = await openCore(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
  events = core.runner.position;
  var seconds = (performance.now() - started) / 1000;
  await core.runner.stop();
  await core.store.close();
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
  var seconds = (performance.now() - started) / 1000;
  db.close();
}
const peak = memoryOf(process.pid).hwmKb;
const { user, system } = process.cpuUsage(cpuBefore);
process.stdout.write(`RESULT ${JSON.stringify({ events, seconds, eventsPerS: events / seconds, cpuS: (user + system) / 1e6, rssRestMb: rest / 1024, rssPeakMb: peak / 1024 })}\n`);
