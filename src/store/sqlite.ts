// Embedded event store on SQLite (better-sqlite3), the default adapter.
//
// - The tables are in sqliteSchema.ts: the `events` table's INTEGER PRIMARY KEY is the global
//   position and a unique (stream, revision) index is the concurrency guard.
// - WAL with synchronous=FULL: an acknowledged append survives a power cut. To keep that cheap,
//   appends are committed in batches (group commit: one transaction, one fsync for all of them);
//   each append still succeeds or fails on its own expected revisions, unless the database fails
//   the transaction itself (a full disk): then every append of it fails and nothing is written.
// - The commits run on a writer thread (sqliteWriterThread.ts) with its own connection, so the
//   fsync never blocks the event loop. An append made while the writer is idle leaves at the end
//   of the current job; while it commits, the appends of each turn of the event loop leave at the
//   turn's end (a few of them wait for a reply once a batch is queued already), and the writer's
//   next commit takes every batch that reached it meanwhile. That flush first takes the replies
//   that arrived during the turn, read from the writer's reply port.
// - Subscribers are fed from the table itself, so appends made by another process (the CLI)
//   reach them too: `PRAGMA data_version` is polled and changes when another connection commits.
// - With a position marker (logMarker.ts), a log that lost its tail since the last run is refused.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MessagePort, Worker } from 'node:worker_threads';
import { ConcurrencyError } from '../domain/errors.js';
import { systemClock } from '../system/clock.js';
import { upcast } from '../domain/eventVersions.js';
import { LogMarker, type LogMarkerOptions } from './logMarker.js';
import type { AppendOptions, AppendResult, BeatReading, EventStore, EventToAppend, ExpectedRevision, NodeBeat, RecordedEvent, SubscribeOptions, Subscription } from './port.js';
import { ReadAhead } from './sqliteReader.js';
import { createSchema } from './sqliteSchema.js';
import { queuedMessages } from './sqliteThreads.js';
import { startWriter, type WriterEvent, type WriterFailure, type WriterOutcome, type WriterReply, type WriterRequest, type WrittenStream } from './sqliteWriter.js';

/**
 * A row as an array, in the column order of ROW_COLUMNS: raw rows spare better-sqlite3 an object
 * per row, and reading rows is most of a catch-up's reading.
 */
type Row = [position: number, stream: string, revision: number, type: string, data: string, metadata: string | null, created: string];
const ROW_COLUMNS = 'position, stream, revision, type, data, metadata, created';
const READ_AFTER = `SELECT ${ROW_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`;

interface PendingAppend {
  streamName: string;
  events: EventToAppend[];
  expectedRevision: ExpectedRevision;
  alongside: AppendOptions['alongside'];
  resolve(result: AppendResult): void;
  reject(error: Error): void;
}

interface Subscriber extends SubscribeOptions {
  lastDelivered: number;
  pumping: boolean;
  closed: boolean;
}

export interface SqliteEventStoreOptions {
  /** Path of the database file (a file: the writer thread opens it too). */
  file: string;
  /** How often to look for appends made by other processes; 100 ms unless set. */
  pollIntervalMs?: number;
  /** The `created` stamp of appended events (ISO-8601 UTC); the system clock unless set. */
  clock?: () => string;
  /** Where the highest committed position is kept between runs; no marker unless set. */
  positionMarker?: LogMarkerOptions;
  /** Test only: caps the file at this many pages (PRAGMA max_page_count), as a full disk would. */
  maxPageCount?: number;
}

/** An append as sent to the writer thread: its events serialised. */
interface Sent {
  append: PendingAppend;
  events: WriterEvent[];
  alongsideEvents: WriterEvent[] | undefined;
}

/** A batch sent to the writer thread, not yet answered. */
interface InFlight {
  id: number;
  created: string;
  sent: Sent[];
}

interface PendingBeat {
  resolve(reading: BeatReading): void;
  reject(error: Error): void;
}

const PAGE = 2000;
/** Batches out (one committing, one queued) past which a turn's appends may wait for a reply… */
const QUEUED_BATCHES = 2;
/** …when they are fewer than this. */
const FEW_APPENDS = 4;
/** Streams removed per statement: one short write lock at a time. */
const DELETE_BATCH = 500;

function serialised(events: EventToAppend[]): WriterEvent[] {
  return events.map((event) => ({
    type: event.type,
    data: JSON.stringify(event.data),
    metadata: event.metadata === undefined ? null : JSON.stringify(event.metadata),
  }));
}

function failureError(failure: WriterFailure): Error {
  return Object.assign(new Error(failure.message), { code: failure.code });
}

function toRecorded(row: Row): RecordedEvent {
  return {
    streamName: row[1],
    revision: row[2],
    position: row[0],
    type: row[3],
    data: upcast(row[3], JSON.parse(row[4])),
    metadata: row[5] === null ? undefined : JSON.parse(row[5]),
    created: row[6],
  };
}

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly pending: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly subscribers = new Set<Subscriber>();
  private readonly pollTimer: NodeJS.Timeout;
  private dataVersion: number;
  private closed = false;
  private readonly writer: Worker;
  /** Where the writer thread answers. */
  private readonly replies: MessagePort;
  /** Sent and not yet answered, in the order sent (the writer answers in that order). */
  private readonly inFlight: InFlight[] = [];
  private readonly beats = new Map<number, PendingBeat>();
  private lastRequestId = 0;
  private writerFailure: Error | undefined;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly readAhead: ReadAhead<Row>;
  private readonly now: () => string;
  private readonly marker: LogMarker | undefined;

  private readonly stmt: {
    readStream: Database.Statement<[string], Row>;
    readAfter: Database.Statement<[number, number], Row>;
    dataVersion: Database.Statement<[], { data_version: number }>;
    head: Database.Statement<[], { head: number }>;
  };

  constructor(options: SqliteEventStoreOptions) {
    mkdirSync(dirname(options.file), { recursive: true });
    this.db = new Database(options.file);
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma('busy_timeout = 5000');
      createSchema(this.db);
      this.stmt = {
        readStream: this.db.prepare<[string], Row>(`SELECT ${ROW_COLUMNS} FROM events WHERE stream = ? ORDER BY revision`).raw(true),
        readAfter: this.db.prepare<[number, number], Row>(READ_AFTER).raw(true),
        dataVersion: this.db.prepare('PRAGMA data_version'),
        head: this.db.prepare('SELECT coalesce(max(position), 0) AS head FROM events'),
      };
      this.marker = options.positionMarker && LogMarker.open({ ...options.positionMarker, database: options.file }, this.stmt.head.get()!.head);
    } catch (error) {
      this.db.close();
      throw error;
    }
    this.now = options.clock ?? systemClock.now;
    this.dataVersion = this.stmt.dataVersion.get()!.data_version;
    this.pollTimer = setInterval(() => this.pollForOtherWriters(), options.pollIntervalMs ?? 100);
    this.pollTimer.unref();
    this.readAhead = new ReadAhead<Row>({ file: options.file, sql: READ_AFTER });
    ({ worker: this.writer, replies: this.replies } = startWriter({ file: options.file, maxPageCount: options.maxPageCount }));
    this.replies.on('message', (reply: WriterReply) => this.onWriterReply(reply));
    // Referenced only while a request is out: an idle store never keeps the process alive.
    this.writer.unref();
    this.replies.unref();
    this.writer.on('error', (error) => this.onWriterFailure(error));
    this.writer.on('exit', (code) => {
      if (!this.closed) this.onWriterFailure(new Error(`The event store's writer thread stopped (exit code ${code})`));
    });
  }

  append(streamName: string, events: EventToAppend[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('The event store is closed'));
    if (events.length === 0) return Promise.reject(new Error('Nothing to append'));
    if (options.alongside?.streamName === streamName) return Promise.reject(new Error(`An append to ${streamName} cannot name it as its alongside stream too`));
    return new Promise((resolve, reject) => {
      this.pending.push({ streamName, events, expectedRevision: options.expectedRevision ?? 'any', alongside: options.alongside, resolve, reject });
      // An idle writer gets this append at the end of the current job, with whatever else that
      // job appends: waiting for the loop's check phase to gather more would only add its turn to
      // every light append. A busy writer gets what the whole turn appended, in one message (or
      // with the next reply: holdsBack).
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        if (this.inFlight.length === 0) queueMicrotask(this.flush);
        else setImmediate(this.flush);
      }
    });
  }

  async readStream(streamName: string): Promise<RecordedEvent[]> {
    return this.stmt.readStream.all(streamName).map(toRecorded);
  }

  async readAll({ after, limit }: { after: number; limit: number }): Promise<RecordedEvent[]> {
    const rows = (await this.readAhead.take(after, limit)) ?? this.stmt.readAfter.all(after, limit);
    // A full page: a scan goes on from its end, so that page is read while this one is used.
    if (rows.length > 0 && rows.length === limit && !this.closed) this.readAhead.readNext(rows[rows.length - 1]![0], limit);
    return rows.map(toRecorded);
  }

  async headPosition(): Promise<number> {
    return this.stmt.head.get()!.head;
  }

  async deleteStreams(streamNames: readonly string[]): Promise<{ kept: string[] }> {
    if (this.closed || streamNames.length === 0) return { kept: [] };
    this.readAhead.discard();
    const newestStream = this.db.prepare<[], { stream: string }>('SELECT stream FROM events ORDER BY position DESC LIMIT 1');
    const remove = this.db.prepare('DELETE FROM events WHERE stream IN (SELECT value FROM json_each(?))');
    // Under the write lock (IMMEDIATE), so no append slips in between. AUTOINCREMENT never hands
    // out a deleted position again, and keeping the newest event's stream keeps the head.
    return this.db
      .transaction(() => {
        const newest = newestStream.get()?.stream;
        const deletable = streamNames.filter((name) => name !== newest);
        for (let i = 0; i < deletable.length; i += DELETE_BATCH) remove.run(JSON.stringify(deletable.slice(i, i + DELETE_BATCH)));
        return { kept: deletable.length < streamNames.length ? [newest!] : [] };
      })
      .immediate();
  }

  /** On the writer thread: the beat's fsync (and any wait for the write lock) stays off the event loop. */
  beat(mine: NodeBeat, forget: readonly string[] = []): Promise<BeatReading> {
    if (this.closed) return Promise.reject(new Error('The event store is closed'));
    if (this.writerFailure) return Promise.reject(this.writerFailure);
    return new Promise((resolve, reject) => {
      const id = ++this.lastRequestId;
      this.beats.set(id, { resolve, reject });
      this.holdWriter();
      const { node, instance, started, clockMs, count } = mine;
      const request: WriterRequest = { kind: 'beat', id, mine: { node, instance, started, clockMs, count }, forget: [...forget] };
      this.writer.postMessage(request);
    });
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscriber: Subscriber = { ...options, lastDelivered: options.after, pumping: false, closed: false };
    this.subscribers.add(subscriber);
    setImmediate(() => this.pump(subscriber));
    return {
      unsubscribe: async () => {
        subscriber.closed = true;
        this.subscribers.delete(subscriber);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pollTimer);
    // Appends and beats accepted before close() still commit.
    while (this.inFlight.length > 0 || this.pending.length > 0 || this.beats.size > 0) {
      this.sendToWriter();
      if (this.inFlight.length > 0 || this.beats.size > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
    await Promise.all([this.writer.terminate(), this.readAhead.close()]);
    this.replies.close();
    this.subscribers.clear();
    try {
      await this.marker?.close(this.stmt.head.get()!.head);
    } finally {
      this.db.close();
    }
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    // A reply that reached the port during this turn is taken now: its message would wait for
    // the next turn's poll, behind that turn's sockets, while its appends' requests wait on it
    // and the appends it holds back (holdsBack) wait with them.
    for (const reply of queuedMessages<WriterReply>(this.replies)) this.onWriterReply(reply);
    this.sendToWriter();
  };

  /** Sends every pending append to the writer thread as one batch, unless it holds them back. */
  private sendToWriter(): void {
    if (this.pending.length === 0 || this.holdsBack()) return;
    const batch = this.pending.splice(0);
    if (this.writerFailure) {
      for (const append of batch) append.reject(this.writerFailure);
      return;
    }
    const sent: Sent[] = [];
    for (const append of batch) {
      try {
        sent.push({ append, events: serialised(append.events), alongsideEvents: append.alongside && serialised(append.alongside.events) });
      } catch (error) {
        append.reject(error as Error); // data JSON cannot hold: this append fails alone
      }
    }
    if (sent.length === 0) return;
    let created: string;
    try {
      created = this.now();
    } catch (error) {
      for (const { append } of sent) append.reject(error as Error);
      return;
    }
    const flight: InFlight = { id: ++this.lastRequestId, created, sent };
    this.inFlight.push(flight);
    this.holdWriter();
    const request: WriterRequest = {
      kind: 'batch',
      id: flight.id,
      created: flight.created,
      appends: sent.map(({ append, events, alongsideEvents }) => ({
        stream: append.streamName,
        expected: append.expectedRevision,
        events,
        ...(append.alongside && { alongside: { stream: append.alongside.streamName, expected: append.alongside.expectedRevision, events: alongsideEvents! } }),
      })),
    };
    this.writer.postMessage(request);
  }

  /**
   * A few appends wait for a reply while a batch is already queued behind the one committing: a
   * commit costs the writer about as much CPU as several appends, so a trickle of single appends
   * (a flood of realtime connects) sent turn by turn would commit in ones and twos.
   */
  private holdsBack(): boolean {
    return this.inFlight.length >= QUEUED_BATCHES && this.pending.length < FEW_APPENDS;
  }

  /** The writer thread keeps the process alive only while a request is out. */
  private holdWriter(): void {
    if (this.inFlight.length > 0 || this.beats.size > 0) {
      this.writer.ref();
      this.replies.ref();
    } else {
      this.writer.unref();
      this.replies.unref();
    }
  }

  /** After a reply: close() may go on once nothing is out any more. */
  private wakeIfIdle(): void {
    this.holdWriter();
    if (this.inFlight.length === 0 && this.beats.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private onWriterReply(reply: WriterReply): void {
    if ('id' in reply) {
      const beat = this.beats.get(reply.id);
      if (!beat) return;
      this.beats.delete(reply.id);
      if ('beats' in reply) beat.resolve({ beats: reply.beats, storeClockMs: undefined });
      else beat.reject(failureError(reply.fatal));
      this.wakeIfIdle();
      return;
    }
    // The writer answers batches in the order they were sent, each once.
    const flights = this.inFlight.splice(0, reply.ids.length);
    this.sendToWriter();
    if ('outcomes' in reply) for (const [i, flight] of flights.entries()) this.resolveBatch(flight, reply.outcomes[i]!);
    else {
      // Nothing of these batches was written: every append in them fails with the database's error.
      const error = failureError(reply.fatal);
      for (const flight of flights) for (const { append } of flight.sent) append.reject(error);
    }
    this.wakeIfIdle();
  }

  private resolveBatch(flight: InFlight, outcomes: WriterOutcome[]): void {
    const appended: RecordedEvent[] = [];
    const record = (streamName: string, events: WriterEvent[], written: WrittenStream) => {
      for (const [k, event] of events.entries()) {
        appended.push({
          streamName,
          revision: written.revision - events.length + 1 + k,
          position: written.positions[k]!,
          type: event.type,
          data: upcast(event.type, JSON.parse(event.data)),
          metadata: event.metadata === null ? undefined : JSON.parse(event.metadata),
          created: flight.created,
        });
      }
    };
    flight.sent.forEach(({ append, events, alongsideEvents }, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        // In position order: the writer inserts the stream's events, then its alongside's.
        record(append.streamName, events, outcome);
        if (append.alongside && outcome.alongside) record(append.alongside.streamName, alongsideEvents!, outcome.alongside);
        const position = Math.max(outcome.positions.at(-1) ?? 0, outcome.alongside?.positions.at(-1) ?? 0);
        append.resolve({
          nextExpectedRevision: outcome.revision,
          position,
          ...(outcome.alongside && { alongsideRevision: outcome.alongside.revision }),
        });
      } else if ('conflict' in outcome) {
        const { alongside, current } = outcome.conflict;
        const actual = current === -1 ? 'no_stream' : current;
        if (alongside) append.reject(new ConcurrencyError(append.alongside!.streamName, append.alongside!.expectedRevision, actual));
        else append.reject(new ConcurrencyError(append.streamName, append.expectedRevision as number | 'no_stream', actual));
      } else {
        append.reject(new Error(outcome.message));
      }
    });
    const last = appended.at(-1);
    if (last) this.marker?.saw(last.position);
    for (const subscriber of this.subscribers) this.deliverFresh(subscriber, appended);
  }

  private onWriterFailure(error: Error): void {
    this.writerFailure ??= error;
    for (const flight of this.inFlight.splice(0)) for (const { append } of flight.sent) append.reject(this.writerFailure);
    for (const append of this.pending.splice(0)) append.reject(this.writerFailure);
    for (const beat of this.beats.values()) beat.reject(this.writerFailure);
    this.beats.clear();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Fast path: a subscriber that is up to date gets the events we just wrote without a read. */
  private deliverFresh(subscriber: Subscriber, appended: RecordedEvent[]): void {
    const first = appended[0];
    if (!first) return;
    if (subscriber.pumping || first.position !== subscriber.lastDelivered + 1 || !this.contiguous(appended)) {
      this.pump(subscriber);
      return;
    }
    for (const event of appended) {
      if (subscriber.closed) return;
      subscriber.lastDelivered = event.position;
      this.safeDeliver(subscriber, event);
    }
  }

  private contiguous(events: RecordedEvent[]): boolean {
    return events.every((e, i) => i === 0 || e.position === events[i - 1]!.position + 1);
  }

  private pollForOtherWriters(): void {
    if (this.closed) return;
    let version: number;
    try {
      version = this.stmt.dataVersion.get()!.data_version;
    } catch (error) {
      for (const subscriber of this.subscribers) this.stop(subscriber, error as Error);
      return;
    }
    if (version === this.dataVersion) return;
    this.dataVersion = version;
    for (const subscriber of this.subscribers) this.pump(subscriber);
  }

  /** Reads and delivers everything after the subscriber's position, a page at a time. */
  private pump(subscriber: Subscriber): void {
    if (subscriber.pumping || subscriber.closed || this.closed) return;
    subscriber.pumping = true;
    const step = () => {
      if (subscriber.closed || this.closed) return;
      let rows: Row[];
      try {
        rows = this.stmt.readAfter.all(subscriber.lastDelivered, PAGE);
      } catch (error) {
        return this.stop(subscriber, error as Error);
      }
      for (const row of rows) {
        if (subscriber.closed) return;
        subscriber.lastDelivered = row[0];
        this.safeDeliver(subscriber, toRecorded(row));
      }
      if (rows.length === PAGE) {
        setImmediate(step); // let the server breathe during a long catch-up
      } else {
        subscriber.pumping = false;
      }
    };
    step();
  }

  private safeDeliver(subscriber: Subscriber, event: RecordedEvent): void {
    try {
      subscriber.onEvent(event);
    } catch (error) {
      this.stop(subscriber, error as Error);
    }
  }

  /** A subscription stops at its first failure and says so once (port.ts). */
  private stop(subscriber: Subscriber, error: Error): void {
    if (subscriber.closed) return;
    subscriber.closed = true;
    this.subscribers.delete(subscriber);
    subscriber.onError?.(error);
  }
}
