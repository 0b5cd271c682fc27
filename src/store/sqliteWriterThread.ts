// The SQLite adapter's writer thread (started by sqliteWriter.ts). It holds its own connection to
// the file and commits what the event loop sends:
//
// - Batches of appends: every batch waiting when the thread turns to them goes in one IMMEDIATE
//   transaction, one fsync. The event loop sends its appends while a commit is in progress, so
//   they are here when it ends: the next commit starts then, not once the event loop has found
//   time to handle the reply. Each append is checked against its own expected revision (and its
//   alongside stream's), seeing the appends before it in the same transaction, and written whole
//   or not at all: a savepoint when it has several inserts (SAVEPOINT and RELEASE cost more than
//   the insert of a single event).
// - A constraint error of one append's insert (a trigger, the (stream, revision) index) undoes
//   that append alone: SQLite rolls back only the statement or savepoint, the transaction goes on.
//   Any other error (a full disk, an I/O error: after those SQLite may have rolled back the whole
//   transaction, and what followed would commit one statement at a time) fails the whole
//   transaction, rolled back, every append of its batches rejected with it.
// - A heartbeat (beat): a tiny write, here rather than on the event loop's connection so that its
//   fsync and any wait for the write lock never stop the event loop.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { ExpectedRevision, NodeBeat } from './port.js';
import type {
  WriterAppend,
  WriterBatch,
  WriterBeat,
  WriterEvent,
  WriterFailure,
  WriterOutcome,
  WriterReply,
  WriterRequest,
  WriterThreadData,
  WrittenStream,
} from './sqliteWriter.js';
import { queuedMessages } from './sqliteThreads.js';

const options = workerData as WriterThreadData;
const port = parentPort!;
const { replies } = options;

const db = new Database(options.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
if (options.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.trunc(options.maxPageCount)}`);

const lastRevision = db.prepare<[string], number>('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1').pluck();
const insert = db.prepare<[string, number, string, string, string | null, string]>(
  'INSERT INTO events (stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?)',
);
const upsertBeat = db.prepare<[NodeBeat]>(
  `INSERT INTO nodes (instance, node, started, clock_ms, count) VALUES (@instance, @node, @started, @clockMs, @count)
   ON CONFLICT (instance) DO UPDATE SET node = excluded.node, started = excluded.started, clock_ms = excluded.clock_ms, count = excluded.count`,
);
const forgetBeats = db.prepare<[string]>('DELETE FROM nodes WHERE instance IN (SELECT value FROM json_each(?))');
const allBeats = db.prepare<[], NodeBeat>('SELECT node, instance, started, clock_ms AS clockMs, count FROM nodes ORDER BY node, instance');

function failureOf(error: unknown): WriterFailure {
  if (error instanceof Database.SqliteError) return { message: error.message, code: error.code };
  return { message: error instanceof Error ? error.message : String(error), code: undefined };
}

/** An error that undid one append's own statement or savepoint and left the transaction open. */
function failsAlone(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code.startsWith('SQLITE_CONSTRAINT') && db.inTransaction;
}

function matches(expected: ExpectedRevision, current: number): boolean {
  return expected === 'any' || (expected === 'no_stream' ? current === -1 : expected === current);
}

function insertAll(stream: string, after: number, events: WriterEvent[], created: string, positions: number[]): void {
  let revision = after;
  for (const event of events) {
    revision += 1;
    positions.push(Number(insert.run(stream, revision, event.type, event.data, event.metadata, created).lastInsertRowid));
  }
}

/** One append inside the batch's transaction; `revisions` holds what the batch wrote so far. */
function writeAppend(append: WriterAppend, created: string, revisions: Map<string, number>): WriterOutcome {
  const currentOf = (stream: string) => revisions.get(stream) ?? lastRevision.get(stream) ?? -1;
  const current = currentOf(append.stream);
  if (!matches(append.expected, current)) return { ok: false, conflict: { alongside: false, current } };
  const side = append.alongside;
  const sideCurrent = side ? currentOf(side.stream) : -1;
  if (side && !matches(side.expected, sideCurrent)) return { ok: false, conflict: { alongside: true, current: sideCurrent } };
  const written: WrittenStream = { revision: current + append.events.length, positions: [] };
  const sideWritten: WrittenStream | undefined = side && { revision: sideCurrent + side.events.length, positions: [] };
  const write = () => {
    insertAll(append.stream, current, append.events, created, written.positions);
    if (side) insertAll(side.stream, sideCurrent, side.events, created, sideWritten!.positions);
  };
  try {
    // One INSERT fails whole on its own; only several need a savepoint to fail together.
    if (append.events.length + (side?.events.length ?? 0) === 1) write();
    else db.transaction(write)();
  } catch (error) {
    if (failsAlone(error)) return { ok: false, message: failureOf(error).message };
    throw error; // the whole batch fails
  }
  revisions.set(append.stream, written.revision);
  if (side && sideWritten) revisions.set(side.stream, sideWritten.revision);
  return { ok: true, ...written, ...(sideWritten && { alongside: sideWritten }) };
}

/** The batches in one transaction, in the order they were sent. */
function commitBatches(batches: WriterBatch[]): WriterReply {
  const ids = batches.map((batch) => batch.id);
  const outcomes: WriterOutcome[][] = [];
  try {
    db.transaction(() => {
      const revisions = new Map<string, number>();
      for (const { created, appends } of batches) outcomes.push(appends.map((append) => writeAppend(append, created, revisions)));
    }).immediate();
  } catch (error) {
    rollBackWhatIsLeft();
    return { ids, fatal: failureOf(error) };
  }
  return { ids, outcomes };
}

function beat({ id, mine, forget }: WriterBeat): WriterReply {
  try {
    const beats = db
      .transaction(() => {
        if (forget.length > 0) forgetBeats.run(JSON.stringify(forget));
        upsertBeat.run(mine);
        return allBeats.all();
      })
      .immediate();
    return { id, beats };
  } catch (error) {
    rollBackWhatIsLeft();
    return { id, fatal: failureOf(error) };
  }
}

/**
 * better-sqlite3 rolls a failed transaction back while SQLite still has it open; should the
 * rollback itself have failed, the next request must not begin inside what is left of it.
 */
function rollBackWhatIsLeft(): void {
  if (!db.inTransaction) return;
  try {
    db.exec('ROLLBACK');
  } catch {
    // Nothing more to undo here: SQLite ends the transaction itself when it cannot go on.
  }
}

port.on('message', (first: WriterRequest) => {
  const batches: WriterBatch[] = [];
  const beats: WriterBeat[] = [];
  for (const request of [first, ...queuedMessages<WriterRequest>(port)]) {
    if (request.kind === 'batch') batches.push(request);
    else beats.push(request);
  }
  if (batches.length > 0) replies.postMessage(commitBatches(batches));
  for (const request of beats) replies.postMessage(beat(request));
});
