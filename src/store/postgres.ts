// Event store on PostgreSQL (node-postgres), for deployments where several nodes share one log.
//
// - Tables and migrations: postgresSchema.ts; open() brings the schema up to date first.
// - One global order without gaps for followers: appends take one advisory lock (APPEND_LOCK)
//   and hold it to their commit, so they commit one at a time, in the order of the positions they
//   drew. A reader of "after position N" therefore never sees a later position before an earlier
//   one commits, and reads need no filter. Chosen over reading below the oldest running
//   transaction (pg_snapshot_xmin) because positions must rise in commit order for the port's
//   single-number checkpoint; the price is one append committing at a time across all nodes.
// - Positions are drawn from the sequence under the lock, a whole append's at once, so an append's
//   events are contiguous. A rolled-back append leaves its positions unused: gaps, never reuse.
// - Subscribers read the table: woken by LISTEN/NOTIFY (postgresListener.ts), by this process's
//   own appends, and by a poll every pollIntervalMs for whatever no notification told of. A
//   subscription stops at its first failure and reports it; resumingStore resumes it.
// - `created` is the server's clock (the log's clock, docs/architecture.md), read after the lock.
import type pg from 'pg';
import type { PoolClient } from 'pg';
import { AppError, ConcurrencyError, RecordTooLargeError } from '../domain/errors.js';
import { upcast } from '../domain/eventVersions.js';
import { redactedConnectionString } from './connectionString.js';
import { postgresFailureReason } from './postgresConnection.js';
import { openPool } from './postgresPool.js';
import { AppendListener, APPENDED_CHANNEL } from './postgresListener.js';
import { APPEND_LOCK, migrate } from './postgresSchema.js';
import { transaction } from './postgresTransaction.js';
import type { AppendOptions, AppendResult, BeatReading, EventStore, EventToAppend, ExpectedRevision, NodeBeat, RecordedEvent, SubscribeOptions, Subscription } from './port.js';

/** The data and metadata of one append, as JSON text, take at most this many bytes (RecordTooLargeError). */
export const MAX_APPEND_BYTES = 4 * 1024 * 1024;
/** Subscribers look for appends no notification told of this often, unless set. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/** Events read per query by a subscription. */
const PAGE = 1000;
/** Streams removed per transaction: the append lock is held for one batch at a time. */
const DELETE_BATCH = 500;

const COLUMNS = 'position, stream, revision, type, data, metadata, created';

interface Row {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown> | null;
  created: Date;
}

function toRecorded(row: Row): RecordedEvent {
  return {
    streamName: row.stream,
    revision: row.revision,
    position: row.position,
    type: row.type,
    data: upcast(row.type, row.data),
    metadata: row.metadata ?? undefined,
    created: row.created.toISOString(),
  };
}

/** One event's row, its JSON serialised; its revision is known once the stream's is. */
interface NewRow {
  stream: string;
  type: string;
  data: string;
  metadata: string | null;
}

function newRows(stream: string, events: EventToAppend[]): NewRow[] {
  return events.map((event) => ({
    stream,
    type: event.type,
    data: JSON.stringify(event.data ?? null),
    metadata: event.metadata === undefined ? null : JSON.stringify(event.metadata),
  }));
}

const bytesOf = (rows: NewRow[]) => rows.reduce((sum, row) => sum + Buffer.byteLength(row.data) + (row.metadata === null ? 0 : Buffer.byteLength(row.metadata)), 0);

function matches(expected: ExpectedRevision, current: number): boolean {
  return expected === 'any' || (expected === 'no_stream' ? current === -1 : expected === current);
}

const actualOf = (current: number) => (current === -1 ? 'no_stream' : current);

// The positions of an append are drawn at once (the lock keeps every other append out), the rows
// inserted in revision order, and the commit will wake every listener.
const INSERT = `
  WITH drawn AS MATERIALIZED (SELECT setval('events_position', nextval('events_position') + $1 - 1) AS last),
  inserted AS (
    INSERT INTO events (position, stream, revision, type, data, metadata, created)
    SELECT drawn.last - $1 + e.n, e.stream, e.revision, e.type, e.data, e.metadata, statement_timestamp()
    FROM unnest($2::text[], $3::int[], $4::text[], $5::json[], $6::json[]) WITH ORDINALITY AS e(stream, revision, type, data, metadata, n), drawn
    RETURNING position
  )
  SELECT max(position) AS position, pg_notify('${APPENDED_CHANNEL}', max(position)::text) FROM inserted`;

// Forgets, then records this instance's beat (an instance that names itself among the forgotten
// is written again, as the other adapters do), and answers every beat with the server's clock,
// read once in the same statement.
const BEAT = `
  WITH forgotten AS (DELETE FROM nodes WHERE instance = ANY($6::text[]) AND instance <> $2),
  mine AS (
    INSERT INTO nodes (instance, node, started, clock_ms, count) VALUES ($2, $1, $3, $4, $5)
    ON CONFLICT (instance) DO UPDATE SET node = excluded.node, started = excluded.started, clock_ms = excluded.clock_ms, count = excluded.count
    RETURNING node, instance, started, clock_ms, count
  ),
  server AS MATERIALIZED (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS clock_ms)
  SELECT b.node, b.instance, b.started, b.clock_ms AS "clockMs", b.count, server.clock_ms AS "storeClockMs"
  FROM (
    SELECT * FROM mine
    UNION ALL
    SELECT node, instance, started, clock_ms, count FROM nodes WHERE instance <> $2 AND NOT instance = ANY($6::text[])
  ) AS b, server
  ORDER BY b.node COLLATE "C", b.instance COLLATE "C"`;

interface Subscriber extends SubscribeOptions {
  lastDelivered: number;
  pumping: boolean;
  /** Woken while pumping: read once more before resting. */
  again: boolean;
  closed: boolean;
}

export interface PostgresEventStoreOptions {
  /** postgresql://… (postgresConnection.ts tells what it may hold). */
  connectionString: string;
  /** How often subscribers look for appends no notification told of; DEFAULT_POLL_INTERVAL_MS unless set. */
  pollIntervalMs?: number;
}

export class PostgresEventStore implements EventStore {
  private readonly pool: pg.Pool;
  private readonly listener: AppendListener;
  private readonly subscribers = new Set<Subscriber>();
  private readonly pollTimer: NodeJS.Timeout;
  private polling = false;
  private closed = false;
  private readonly server: string;

  /** Connects, brings the schema up to date and answers the store; rejects with one line saying why not. */
  static async open(options: PostgresEventStoreOptions): Promise<PostgresEventStore> {
    const store = new PostgresEventStore(options);
    try {
      await migrate(store.pool);
    } catch (error) {
      await store.close();
      throw new Error(postgresFailureReason(error), { cause: error });
    }
    return store;
  }

  private constructor(options: PostgresEventStoreOptions) {
    const { pool, client } = openPool(options.connectionString);
    this.pool = pool;
    this.server = `PostgreSQL at ${redactedConnectionString(options.connectionString)}`;
    this.listener = new AppendListener(client, {
      appended: () => this.wakeAll(),
      lost: (error) => this.stopAll(this.failure(error)),
    });
    this.pollTimer = setInterval(() => void this.poll(), options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
    this.pollTimer.unref();
  }

  async append(streamName: string, events: EventToAppend[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) throw new Error('The event store is closed');
    if (events.length === 0) throw new Error('Nothing to append');
    const side = options.alongside;
    if (side?.streamName === streamName) throw new Error(`An append to ${streamName} cannot name it as its alongside stream too`);
    const expected = options.expectedRevision ?? 'any';
    // Serialised before any connection is taken: data JSON cannot hold fails here, alone.
    const mainRows = newRows(streamName, events);
    const sideRows = side ? newRows(side.streamName, side.events) : [];
    const bytes = bytesOf(mainRows) + bytesOf(sideRows);
    if (bytes > MAX_APPEND_BYTES) {
      throw new RecordTooLargeError(`The events are larger than the event store accepts in one append (${bytes} bytes; at most ${MAX_APPEND_BYTES})`);
    }
    const result = await this.locked(async (client) => {
      const streams = side ? [streamName, side.streamName] : [streamName];
      const { rows } = await client.query<{ stream: string; revision: number }>(
        'SELECT stream, max(revision) AS revision FROM events WHERE stream = ANY($1::text[]) GROUP BY stream',
        [streams],
      );
      const currentOf = (stream: string) => rows.find((row) => row.stream === stream)?.revision ?? -1;
      const current = currentOf(streamName);
      if (!matches(expected, current)) throw new ConcurrencyError(streamName, expected as number | 'no_stream', actualOf(current));
      const sideCurrent = side ? currentOf(side.streamName) : -1;
      if (side && !matches(side.expectedRevision, sideCurrent)) throw new ConcurrencyError(side.streamName, side.expectedRevision, actualOf(sideCurrent));
      // In position order: the stream's events, then its alongside's, each in revision order.
      const written = [...mainRows, ...sideRows];
      const revisions = [...mainRows.map((_, k) => current + 1 + k), ...sideRows.map((_, k) => sideCurrent + 1 + k)];
      const inserted = await client.query<{ position: number }>(INSERT, [
        written.length,
        written.map((row) => row.stream),
        revisions,
        written.map((row) => row.type),
        written.map((row) => row.data),
        written.map((row) => row.metadata),
      ]);
      return {
        nextExpectedRevision: current + events.length,
        position: inserted.rows[0]!.position,
        ...(side && { alongsideRevision: sideCurrent + side.events.length }),
      };
    });
    // Subscribers here need not wait for the notification's round trip.
    this.wakeAll();
    return result;
  }

  async readStream(streamName: string): Promise<RecordedEvent[]> {
    const { rows } = await this.query<Row>(`SELECT ${COLUMNS} FROM events WHERE stream = $1 ORDER BY revision`, [streamName]);
    return rows.map(toRecorded);
  }

  async readAll({ after, limit }: { after: number; limit: number }): Promise<RecordedEvent[]> {
    if (limit <= 0) return [];
    const { rows } = await this.query<Row>(`SELECT ${COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`, [after, Math.trunc(limit)]);
    return rows.map(toRecorded);
  }

  async headPosition(): Promise<number> {
    const { rows } = await this.query<{ head: number }>('SELECT coalesce(max(position), 0) AS head FROM events');
    return rows[0]!.head;
  }

  async deleteStreams(streamNames: readonly string[]): Promise<{ kept: string[] }> {
    if (this.closed || streamNames.length === 0) return { kept: [] };
    const kept = new Set<string>();
    for (let i = 0; i < streamNames.length; i += DELETE_BATCH) {
      const batch = streamNames.slice(i, i + DELETE_BATCH);
      // Under the append lock, so no append slips in between: keeping the newest event's stream
      // keeps the head where it is.
      await this.locked(async (client) => {
        const { rows } = await client.query<{ stream: string }>('SELECT stream FROM events ORDER BY position DESC LIMIT 1');
        const newest = rows[0]?.stream;
        const deletable = batch.filter((name) => name !== newest);
        if (newest !== undefined && deletable.length < batch.length) kept.add(newest);
        await client.query('DELETE FROM events WHERE stream = ANY($1::text[])', [deletable]);
      });
    }
    return { kept: [...kept] };
  }

  /** One statement: the server's clock is read in it, with the beats it answers. */
  async beat(mine: NodeBeat, forget: readonly string[] = []): Promise<BeatReading> {
    const { rows } = await this.query<NodeBeat & { storeClockMs: number }>(BEAT, [mine.node, mine.instance, mine.started, mine.clockMs, mine.count, [...forget]]);
    return {
      beats: rows.map(({ node, instance, started, clockMs, count }) => ({ node, instance, started, clockMs, count })),
      storeClockMs: rows[0]!.storeClockMs,
    };
  }

  /** Stops at the first failure and reports it (see port.ts); resumingStore resumes it. */
  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscriber: Subscriber = { ...options, lastDelivered: options.after, pumping: false, again: false, closed: false };
    if (!this.closed) {
      this.subscribers.add(subscriber);
      // Listening first: an append that commits after the catch-up's last read is then heard of.
      this.listener.ready().then(
        () => void this.pump(subscriber),
        (error: unknown) => this.stop(subscriber, this.failure(error)),
      );
    }
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
    for (const subscriber of this.subscribers) subscriber.closed = true;
    this.subscribers.clear();
    await this.listener.close();
    await this.pool.end();
  }

  /** A query on a pooled connection; a failure is told as the store's, naming the server. */
  private async query<T extends object>(sql: string, values?: unknown[]): Promise<pg.QueryResult<T>> {
    if (this.closed) throw new Error('The event store is closed');
    try {
      return await this.pool.query<T>(sql, values);
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** Runs `work` in a transaction holding the append lock; a rejection rolls it back. */
  private async locked<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('The event store is closed');
    try {
      // The lock is taken in BEGIN's round trip: its wait is part of every append's time.
      return await transaction(this.pool, `SELECT pg_advisory_xact_lock(${APPEND_LOCK})`, work);
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** The caller's refusals (a conflict, an oversized append) as they are; anything else in one line naming the server. */
  private failure(error: unknown): Error {
    if (error instanceof AppError) return error;
    const failure = new Error(`${this.server}: ${postgresFailureReason(error)}`, { cause: error });
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? Object.assign(failure, { code }) : failure;
  }

  private wakeAll(): void {
    for (const subscriber of this.subscribers) void this.pump(subscriber);
  }

  private stopAll(error: Error): void {
    for (const subscriber of [...this.subscribers]) this.stop(subscriber, error);
  }

  /** The poll: subscribers behind the head read on; a server that does not answer stops them. */
  private async poll(): Promise<void> {
    if (this.polling || this.closed || this.subscribers.size === 0) return;
    this.polling = true;
    try {
      const head = await this.headPosition();
      for (const subscriber of this.subscribers) if (subscriber.lastDelivered < head) void this.pump(subscriber);
    } catch (error) {
      this.stopAll(error as Error);
    } finally {
      this.polling = false;
    }
  }

  /** Reads and delivers everything after the subscriber's position, a page at a time. */
  private async pump(subscriber: Subscriber): Promise<void> {
    if (subscriber.closed || this.closed) return;
    if (subscriber.pumping) {
      subscriber.again = true;
      return;
    }
    subscriber.pumping = true;
    try {
      for (;;) {
        subscriber.again = false;
        const page = await this.readAll({ after: subscriber.lastDelivered, limit: PAGE });
        for (const event of page) {
          if (subscriber.closed) return;
          subscriber.lastDelivered = event.position;
          try {
            subscriber.onEvent(event);
          } catch (error) {
            return this.stop(subscriber, error as Error);
          }
        }
        if (page.length < PAGE && !subscriber.again) return;
      }
    } catch (error) {
      this.stop(subscriber, error as Error);
    } finally {
      subscriber.pumping = false;
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
