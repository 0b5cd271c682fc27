// The SQLite adapter's writer thread. A commit with synchronous=FULL waits for fsync; on the
// event loop that wait stops every request, stream and timer of the process for its duration
// (a fifth of the service's time under a write load, measured in bench/RESULTS.md). In this
// worker thread the wait blocks only the worker: the event loop keeps serving, and the appends
// that arrive meanwhile form the next batch (group commit).
//
// The worker runs plain JavaScript (`eval`), so it starts the same way under tsx, from dist/ and
// in tests; it holds its own connection to the same file and does exactly what the in-thread
// path of SqliteEventStore.flush() does: one IMMEDIATE transaction per batch, each append
// checked against its own expected revision and written whole or not at all (a savepoint when it
// has several events: SAVEPOINT and RELEASE cost more than the insert of a single event).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** One append as the writer receives it: data and metadata already serialised. */
export interface WriterAppend {
  stream: string;
  expected: 'any' | 'no_stream' | number;
  events: Array<{ type: string; data: string; metadata: string | null }>;
}

export interface WriterBatch {
  id: number;
  created: string;
  appends: WriterAppend[];
}

export type WriterOutcome =
  | { ok: true; revision: number; positions: number[] }
  /** `current`: the stream's last revision, -1 when it does not exist. */
  | { ok: false; conflict: number }
  | { ok: false; message: string };

export type WriterReply = { id: number; outcomes: WriterOutcome[] } | { id: number; fatal: string };

const WRITER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
const lastRevision = db.prepare('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1').pluck();
const insert = db.prepare('INSERT INTO events (stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?)');
const describe = (error) => (error && error.message) || String(error);
parentPort.on('message', ({ id, created, appends }) => {
  const outcomes = [];
  try {
    db.transaction(() => {
      const revisions = new Map();
      for (const append of appends) {
        const known = revisions.get(append.stream);
        const current = known !== undefined ? known : (lastRevision.get(append.stream) ?? -1);
        const expected = append.expected;
        if (!(expected === 'any' || (expected === 'no_stream' ? current === -1 : expected === current))) {
          outcomes.push({ ok: false, conflict: current });
          continue;
        }
        let revision = current;
        const positions = [];
        const write = () => {
          for (const event of append.events) {
            revision += 1;
            positions.push(Number(insert.run(append.stream, revision, event.type, event.data, event.metadata, created).lastInsertRowid));
          }
        };
        try {
          // One INSERT fails whole on its own; only several need a savepoint to fail together.
          if (append.events.length === 1) write();
          else db.transaction(write)();
        } catch (error) {
          outcomes.push({ ok: false, message: describe(error) });
          continue;
        }
        revisions.set(append.stream, revision);
        outcomes.push({ ok: true, revision, positions });
      }
    }).immediate();
  } catch (error) {
    parentPort.postMessage({ id, fatal: describe(error) });
    return;
  }
  parentPort.postMessage({ id, outcomes });
});
`;

/** Starts a writer thread on `file` (the schema must exist already). */
export function startWriter(file: string): Worker {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  // No inherited execArgv: the worker needs no loader hooks (it is plain JavaScript).
  return new Worker(WRITER_SOURCE, { eval: true, workerData: { file, driver }, execArgv: [] });
}
