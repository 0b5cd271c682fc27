// Embedded event store on SQLite (better-sqlite3), the default adapter.
//
// - One `events` table; the INTEGER PRIMARY KEY is the global position and a unique
//   (stream, revision) index is the concurrency guard.
// - WAL with synchronous=FULL: an acknowledged append survives a power cut. To keep that cheap,
//   appends made in the same tick are committed in one transaction (one fsync for all of them);
//   each append still succeeds or fails on its own expected revision.
// - Subscribers are fed from the table itself, so appends made by another process (the CLI)
//   reach them too: `PRAGMA data_version` is polled and changes when another connection commits.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConcurrencyError } from '../domain/errors.js';
import type { AppendResult, EventStore, EventToAppend, ExpectedRevision, RecordedEvent, SubscribeOptions, Subscription } from './port.js';

interface Row {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string | null;
  created: string;
}

interface PendingAppend {
  streamName: string;
  events: EventToAppend[];
  expectedRevision: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: Error): void;
}

interface Subscriber extends SubscribeOptions {
  lastDelivered: number;
  pumping: boolean;
  closed: boolean;
}

export interface SqliteEventStoreOptions {
  /** Path of the database file, or ':memory:'. */
  file: string;
  /** How often to look for appends made by other processes. */
  pollIntervalMs?: number;
}

const PAGE = 2000;

function toRecorded(row: Row): RecordedEvent {
  return {
    streamName: row.stream,
    revision: row.revision,
    position: row.position,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: row.metadata === null ? undefined : JSON.parse(row.metadata),
    created: row.created,
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

  private readonly stmt: {
    lastRevision: Database.Statement<[string], { revision: number }>;
    insert: Database.Statement<[string, number, string, string, string | null, string]>;
    readStream: Database.Statement<[string], Row>;
    readAfter: Database.Statement<[number, number], Row>;
    dataVersion: Database.Statement<[], { data_version: number }>;
    head: Database.Statement<[], { head: number }>;
  };

  constructor(options: SqliteEventStoreOptions) {
    if (options.file !== ':memory:') mkdirSync(dirname(options.file), { recursive: true });
    this.db = new Database(options.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        stream   TEXT    NOT NULL,
        revision INTEGER NOT NULL,
        type     TEXT    NOT NULL,
        data     TEXT    NOT NULL,
        metadata TEXT,
        created  TEXT    NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS events_stream_revision ON events (stream, revision);
    `);
    this.stmt = {
      lastRevision: this.db.prepare('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1'),
      insert: this.db.prepare('INSERT INTO events (stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?)'),
      readStream: this.db.prepare('SELECT * FROM events WHERE stream = ? ORDER BY revision'),
      readAfter: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      dataVersion: this.db.prepare('PRAGMA data_version'),
      head: this.db.prepare('SELECT coalesce(max(position), 0) AS head FROM events'),
    };
    this.dataVersion = this.stmt.dataVersion.get()!.data_version;
    this.pollTimer = setInterval(() => this.pollForOtherWriters(), options.pollIntervalMs ?? 100);
    this.pollTimer.unref();
  }

  append(streamName: string, events: EventToAppend[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('The event store is closed'));
    if (events.length === 0) return Promise.reject(new Error('Nothing to append'));
    return new Promise((resolve, reject) => {
      this.pending.push({ streamName, events, expectedRevision: options.expectedRevision ?? 'any', resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  async readStream(streamName: string): Promise<RecordedEvent[]> {
    return this.stmt.readStream.all(streamName).map(toRecorded);
  }

  async readAll(options: { after: number; limit: number }): Promise<RecordedEvent[]> {
    return this.stmt.readAfter.all(options.after, options.limit).map(toRecorded);
  }

  async headPosition(): Promise<number> {
    return this.stmt.head.get()!.head;
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
    this.flush();
    this.subscribers.clear();
    this.db.close();
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    const created = new Date().toISOString();
    const outcomes: Array<{ ok: true; result: AppendResult; recorded: RecordedEvent[] } | { ok: false; error: Error }> = [];
    try {
      this.db
        .transaction(() => {
          const revisions = new Map<string, number>();
          for (const append of batch) {
            const current = revisions.get(append.streamName) ?? this.stmt.lastRevision.get(append.streamName)?.revision ?? -1;
            const expected = append.expectedRevision;
            const ok = expected === 'any' || (expected === 'no_stream' ? current === -1 : expected === current);
            if (!ok) {
              outcomes.push({ ok: false, error: new ConcurrencyError(append.streamName, expected as number | 'no_stream', current === -1 ? 'no_stream' : current) });
              continue;
            }
            let revision = current;
            const recorded: RecordedEvent[] = [];
            try {
              // A savepoint: an append that cannot be stored (data JSON cannot hold, a constraint)
              // is undone and fails alone instead of taking the whole batch down with it.
              this.db.transaction(() => {
                for (const event of append.events) {
                  revision += 1;
                  const data = JSON.stringify(event.data);
                  const metadata = event.metadata === undefined ? null : JSON.stringify(event.metadata);
                  const { lastInsertRowid } = this.stmt.insert.run(append.streamName, revision, event.type, data, metadata, created);
                  recorded.push({
                    streamName: append.streamName,
                    revision,
                    position: Number(lastInsertRowid),
                    type: event.type,
                    data: JSON.parse(data),
                    metadata: metadata === null ? undefined : JSON.parse(metadata),
                    created,
                  });
                }
              })();
            } catch (error) {
              outcomes.push({ ok: false, error: error as Error });
              continue;
            }
            revisions.set(append.streamName, revision);
            outcomes.push({ ok: true, recorded, result: { nextExpectedRevision: revision, position: recorded.at(-1)!.position } });
          }
        })
        .immediate();
    } catch (error) {
      for (const append of batch) append.reject(error as Error);
      return;
    }
    const appended: RecordedEvent[] = [];
    batch.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        appended.push(...outcome.recorded);
        append.resolve(outcome.result);
      } else {
        append.reject(outcome.error);
      }
    });
    // No data_version bookkeeping here: our own commits never change it, and re-reading it now
    // would swallow a commit another process made since the last poll.
    for (const subscriber of this.subscribers) this.deliverFresh(subscriber, appended);
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
    const version = this.stmt.dataVersion.get()!.data_version;
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
      const rows = this.stmt.readAfter.all(subscriber.lastDelivered, PAGE);
      for (const row of rows) {
        if (subscriber.closed) return;
        subscriber.lastDelivered = row.position;
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
      subscriber.onError?.(error as Error);
    }
  }
}
