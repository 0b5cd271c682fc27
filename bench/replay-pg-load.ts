// Copies a generated SQLite log (bench/replay-gen.ts) into a PostgreSQL database, row for row
// (positions, streams, revisions, types, JSON, timestamps), in the adapter's own tables: the
// same events, so pg-replay and replay replay one log. Through the adapter it would take as many
// one-at-a-time commits as appends; in batches it takes a few hundred commits. Then the position
// sequence is set past the last row, and VACUUM ANALYZE and a checkpoint leave the table as a
// long-running database holds it (hint bits set, statistics known, nothing left to flush), so
// the first scan does not pay for the load.
// Argument: JSON {file, connectionString}. Prints `RESULT {events, seconds, tableMb}`.
import Database from 'better-sqlite3';
import { openPool } from '../src/store/postgresPool.js';
import { migrate } from '../src/store/postgresSchema.js';

const { file, connectionString } = JSON.parse(process.argv[2]!) as { file: string; connectionString: string };
const BATCH = 5000;

const started = performance.now();
const source = new Database(file, { readonly: true });
const page = source.prepare('SELECT position, stream, revision, type, data, metadata, created FROM events WHERE position > ? ORDER BY position LIMIT ?').raw();
const { pool } = openPool(connectionString, { max: 2 });
await migrate(pool);
const INSERT = `
  INSERT INTO events (position, stream, revision, type, data, metadata, created)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::json[], $6::json[], $7::timestamptz[])`;

let events = 0;
let after = 0;
// Two batches in flight: one being read from SQLite while the other commits.
let previous: Promise<unknown> = Promise.resolve();
for (;;) {
  const rows = page.all(after, BATCH) as Array<[number, string, number, string, string, string | null, string]>;
  if (rows.length === 0) break;
  const columns = [0, 1, 2, 3, 4, 5, 6].map((k) => rows.map((row) => row[k]));
  await previous;
  previous = pool.query(INSERT, columns);
  events += rows.length;
  after = rows[rows.length - 1]![0];
}
await previous;
await pool.query(`SELECT setval('events_seq', (SELECT max(position) FROM events))`);
await pool.query('VACUUM ANALYZE events');
await pool.query('CHECKPOINT');
const { rows } = await pool.query<{ bytes: number }>(`SELECT pg_total_relation_size('events') AS bytes`);
await pool.end();
source.close();
process.stdout.write(`RESULT ${JSON.stringify({ events, seconds: (performance.now() - started) / 1000, tableMb: rows[0]!.bytes / 1024 ** 2 })}\n`);
