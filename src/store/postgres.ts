// Event store on PostgreSQL (node-postgres), for deployments where several nodes share one log.
//
// - Tables and migrations: postgresSchema.ts; open() brings the schema up to date first.
// - One global order without gaps for followers, commits sharing WAL flushes: append_batch draws
//   an append's transaction id and its positions under the schema's order lock and lets the lock
//   go before its commit, so a lower position always belongs to a lower transaction id. Reads that
//   follow the log (readAll, headPosition, subscriptions) see only rows of transactions below
//   their snapshot's xmin (FINISHED): those have ended, so nothing can still commit below what a
//   reader has seen, and the port keeps its single-number checkpoint. The cost: a transaction
//   that wrote and stays open, anywhere in the cluster, holds followers back (not appends) until
//   it ends (heldBackMs). Reads of one stream need no filter. No lock is ever held across a
//   client round trip (docs/decisions.md, "PostgreSQL appends").
// - Group commit: the appends waiting in a node go in one statement (postgresAppender.ts), two
//   batches at most in flight, on connections of their own; reads, polls and heartbeats keep
//   the pool.
// - A rolled-back append leaves its positions unused: gaps, never reuse.
// - Subscribers read the table: woken by this process's own appends, by LISTEN/NOTIFY
//   (postgresListener.ts; each node notifies after its commits, coalesced, on a channel of its
//   schema), by a poll every pollIntervalMs for whatever no notification told of, and, while a
//   read stops below committed rows still held back, by a read again soon after. A subscription
//   stops at its first failure and reports it; resumingStore resumes it.
// - `created` is the server's clock (the log's clock, docs/architecture.md), read under the
//   order lock.
import type pg from 'pg';
import { AppError, RecordTooLargeError } from '../domain/errors.js';
import { upcast } from '../domain/eventVersions.js';
import { redactedConnectionString } from './connectionString.js';
import { postgresFailureReason } from './postgresConnection.js';
import { BATCHES_IN_FLIGHT, type NewRow, PostgresAppender } from './postgresAppender.js';
import { openPool } from './postgresPool.js';
import { AppendListener } from './postgresListener.js';
import { migrate } from './postgresSchema.js';
import type { AppendOptions, AppendResult, BeatReading, EventStore, EventToAppend, NodeBeat, RecordedEvent, SubscribeOptions, Subscription } from './port.js';

/** The data and metadata of one append, as JSON text, take at most this many bytes (RecordTooLargeError). */
export const MAX_APPEND_BYTES = 4 * 1024 * 1024;
/** Subscribers look for appends no notification told of this often, unless set. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/** Events read per query by a subscription. */
const PAGE = 1000;
/**
 * A follower whose read stopped below committed rows (held back by a transaction still running)
 * reads again after this unless something wakes it first, then after twice as long each time
 * nothing new arrives, up to HELD_BACK_MAX_RETRY_MS or the poll interval, whichever is shorter:
 * it delivers at most that long after the transaction holding it ends.
 */
const HELD_BACK_FIRST_RETRY_MS = 5;
const HELD_BACK_MAX_RETRY_MS = 1000;
/** Streams removed per statement. */
const DELETE_BATCH = 500;

const COLUMNS = 'position, stream, revision, type, data, metadata, created';

interface Row {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown> | null;
  /** ISO 8601 already (postgresPool.ts). */
  created: string;
}

function toRecorded(row: Row): RecordedEvent {
  return {
    streamName: row.stream,
    revision: row.revision,
    position: row.position,
    type: row.type,
    data: upcast(row.type, row.data),
    metadata: row.metadata ?? undefined,
    created: row.created,
  };
}

function newRows(events: EventToAppend[]): NewRow[] {
  return events.map((event) => ({
    type: event.type,
    data: JSON.stringify(event.data ?? null),
    metadata: event.metadata === undefined ? null : JSON.stringify(event.metadata),
  }));
}

const bytesOf = (rows: NewRow[]) => rows.reduce((sum, row) => sum + Buffer.byteLength(row.data) + (row.metadata === null ? 0 : Buffer.byteLength(row.metadata)), 0);

// Rows readers may see, in one statement's snapshot: those of transactions below its xmin. They
// have all ended, and append_batch draws a lower position only with a lower transaction id, so no
// row can still commit below the newest of them. An InitPlan: the snapshot is read once.
const FINISHED = 'tx < (SELECT pg_snapshot_xmin(pg_current_snapshot()))';

const HEAD_EXPRESSION = `coalesce((SELECT position FROM events WHERE ${FINISHED} ORDER BY position DESC LIMIT 1), 0)`;
/** The newest finished position: the head as readers can reach it. */
const HEAD = `SELECT ${HEAD_EXPRESSION} AS head`;
/** The poll: the head readers can reach, and the newest committed position, in one snapshot. */
const POLL = `SELECT ${HEAD_EXPRESSION} AS head, (SELECT coalesce(max(position), 0) FROM events) AS newest`;

// A page of finished events after $1, and in the same snapshot the newest committed position,
// finished or not: a follower whose page stops below it knows rows are held back.
const PAGE_SQL = `
  SELECT n.newest, e.* FROM (SELECT coalesce(max(position), 0) AS newest FROM events) AS n
  LEFT JOIN LATERAL (SELECT ${COLUMNS} FROM events WHERE position > $1 AND ${FINISHED} ORDER BY position LIMIT $2) AS e ON true
  ORDER BY e.position`;

// Deletes a batch of streams, except those holding the newest event and the newest finished one
// (neither head moves back); one statement, no lock: an append committing meanwhile only moves
// the heads further.
const DELETE = `
  WITH newest AS (
    (SELECT stream FROM events ORDER BY position DESC LIMIT 1)
    UNION (SELECT stream FROM events WHERE ${FINISHED} ORDER BY position DESC LIMIT 1)
  ),
  gone AS (DELETE FROM events WHERE stream = ANY($1::text[]) AND stream NOT IN (SELECT stream FROM newest))
  SELECT array(SELECT stream FROM newest WHERE stream = ANY($1::text[]) ORDER BY stream) AS kept`;

/** The NOTIFY channel of this schema's appends (channels are per database, schemas are not). */
const CHANNEL = "SELECT 'community_bridge_appended_' || 'events'::regclass::oid AS channel";

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
  /** A read again while committed rows are held back (HELD_BACK_FIRST_RETRY_MS). */
  retry: NodeJS.Timeout | undefined;
  retryMs: number;
}

export interface PostgresEventStoreOptions {
  /** postgresql://… (postgresConnection.ts tells what it may hold). */
  connectionString: string;
  /** How often subscribers look for appends no notification told of; DEFAULT_POLL_INTERVAL_MS unless set. */
  pollIntervalMs?: number;
}

export class PostgresEventStore implements EventStore {
  private readonly pool: pg.Pool;
  /** The appends' own connection: they queue in this process, not on the pool. */
  private readonly appendPool: pg.Pool;
  private readonly appender: PostgresAppender;
  private readonly listener: AppendListener;
  private readonly subscribers = new Set<Subscriber>();
  private readonly pollTimer: NodeJS.Timeout;
  private readonly pollIntervalMs: number;
  private polling = false;
  /** Another node's notification came while a batch of this node's was in flight (see the listener). */
  private heardWhileAppending = false;
  /**
   * The first committed position seen that readers could not reach yet, and when it was seen;
   * cleared once they reach it. Under load it comes and goes within a commit; it stays while a
   * transaction that wrote (anywhere in the cluster) stays open.
   */
  private heldBack: { position: number; since: number } | undefined;
  private closed = false;
  private readonly server: string;

  /** Connects, brings the schema up to date and answers the store; rejects with one line saying why not. */
  static async open(options: PostgresEventStoreOptions): Promise<PostgresEventStore> {
    let channel: string;
    const { pool } = openPool(options.connectionString, { max: 1, unbounded: true });
    try {
      await migrate(pool);
      channel = (await pool.query<{ channel: string }>(CHANNEL)).rows[0]!.channel;
    } catch (error) {
      throw new Error(postgresFailureReason(error), { cause: error });
    } finally {
      await pool.end();
    }
    return new PostgresEventStore(options, channel);
  }

  private constructor(
    options: PostgresEventStoreOptions,
    private readonly channel: string,
  ) {
    const { pool, client } = openPool(options.connectionString);
    this.pool = pool;
    this.appendPool = openPool(options.connectionString, { max: BATCHES_IN_FLIGHT }).pool;
    this.server = `PostgreSQL at ${redactedConnectionString(options.connectionString)}`;
    this.appender = new PostgresAppender(this.appendPool, {
      committed: () => {
        // Subscribers here need not wait for the notification's round trip.
        this.wakeAll();
        this.listener.notify();
      },
      failed: (error) => {
        if (this.heardWhileAppending) this.wakeAll();
        return this.failure(error);
      },
    });
    this.listener = new AppendListener(client, channel, {
      // Another node committed. With a batch of this node's in flight, the read its commit wakes
      // (or its failure, see above) starts after this notification and so sees those rows: waking
      // now too would read the table once more for nothing. Under load a node nearly always has a
      // batch in flight, and every other node's notifications would each cost it a read.
      appended: () => {
        if (this.appender.appending) this.heardWhileAppending = true;
        else this.wakeAll();
      },
      lost: (error) => this.stopAll(this.failure(error)),
    });
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.pollTimer = setInterval(() => void this.poll(), this.pollIntervalMs);
    this.pollTimer.unref();
  }

  async append(streamName: string, events: EventToAppend[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) throw new Error('The event store is closed');
    if (events.length === 0) throw new Error('Nothing to append');
    const side = options.alongside;
    if (side?.streamName === streamName) throw new Error(`An append to ${streamName} cannot name it as its alongside stream too`);
    const expected = options.expectedRevision ?? 'any';
    // Serialised before any connection is taken: data JSON cannot hold fails here, alone.
    const mainRows = newRows(events);
    const sideRows = side ? newRows(side.events) : [];
    const bytes = bytesOf(mainRows) + bytesOf(sideRows);
    if (bytes > MAX_APPEND_BYTES) {
      throw new RecordTooLargeError(`The events are larger than the event store accepts in one append (${bytes} bytes; at most ${MAX_APPEND_BYTES})`);
    }
    return this.appender.append({
      stream: streamName,
      expected,
      rows: mainRows,
      ...(side && { side: { stream: side.streamName, expected: side.expectedRevision, rows: sideRows } }),
      bytes,
    });
  }

  async readStream(streamName: string): Promise<RecordedEvent[]> {
    const { rows } = await this.query<Row>(`SELECT ${COLUMNS} FROM events WHERE stream = $1 ORDER BY revision`, [streamName]);
    return rows.map(toRecorded);
  }

  async readAll({ after, limit }: { after: number; limit: number }): Promise<RecordedEvent[]> {
    if (limit <= 0) return [];
    return (await this.readPage(after, Math.trunc(limit))).events;
  }

  /** The newest position readers can see (FINISHED): an append's own position becomes it once the transactions before it end. */
  async headPosition(): Promise<number> {
    const { rows } = await this.query<{ head: number }>(HEAD);
    return rows[0]!.head;
  }

  /** How long committed events have waited to become readable, in ms (0: none wait); see heldBack. */
  heldBackMs(): number {
    return this.heldBack ? Date.now() - this.heldBack.since : 0;
  }

  async deleteStreams(streamNames: readonly string[]): Promise<{ kept: string[] }> {
    if (this.closed || streamNames.length === 0) return { kept: [] };
    const kept = new Set<string>();
    for (let i = 0; i < streamNames.length; i += DELETE_BATCH) {
      const batch = streamNames.slice(i, i + DELETE_BATCH);
      const { rows } = await this.query<{ kept: string[] }>(DELETE, [batch]);
      for (const stream of rows[0]!.kept) kept.add(stream);
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
    const subscriber: Subscriber = { ...options, lastDelivered: options.after, pumping: false, again: false, closed: false, retry: undefined, retryMs: 0 };
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
        clearTimeout(subscriber.retry);
        this.subscribers.delete(subscriber);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pollTimer);
    for (const subscriber of this.subscribers) {
      subscriber.closed = true;
      clearTimeout(subscriber.retry);
    }
    this.subscribers.clear();
    await this.listener.close();
    await Promise.all([this.pool.end(), this.appendPool.end()]);
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

  /** The caller's refusals (a conflict, an oversized append) as they are; anything else in one line naming the server. */
  private failure(error: unknown): Error {
    if (error instanceof AppError) return error;
    const failure = new Error(`${this.server}: ${postgresFailureReason(error)}`, { cause: error });
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? Object.assign(failure, { code }) : failure;
  }

  private wakeAll(): void {
    this.heardWhileAppending = false;
    for (const subscriber of this.subscribers) void this.pump(subscriber);
  }

  private stopAll(error: Error): void {
    for (const subscriber of [...this.subscribers]) this.stop(subscriber, error);
  }

  /** Finished events after `after` (at most `limit`), and the newest committed position. */
  private async readPage(after: number, limit: number): Promise<{ events: RecordedEvent[]; newest: number }> {
    const { rows } = await this.query<Row & { newest: number }>(PAGE_SQL, [after, limit]);
    const events = rows[0]!.position === null ? [] : rows.map(toRecorded);
    const newest = rows[0]!.newest;
    // A short page holds every finished event past `after`: what is past it is held back.
    if (events.length < limit) this.observe(Math.max(after, events.at(-1)?.position ?? 0), newest);
    return { events, newest };
  }

  private observe(reached: number, newest: number): void {
    if (this.heldBack && reached >= this.heldBack.position) this.heldBack = undefined;
    if (!this.heldBack && newest > reached) this.heldBack = { position: newest, since: Date.now() };
  }

  /** The poll: subscribers behind the head read on; a server that does not answer stops them. */
  private async poll(): Promise<void> {
    if (this.polling || this.closed || this.subscribers.size === 0) return;
    this.polling = true;
    try {
      const { head, newest } = (await this.query<{ head: number; newest: number }>(POLL)).rows[0]!;
      this.observe(head, newest);
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
    // Woken otherwise (a commit here, a notification, the poll): the read again is not needed.
    clearTimeout(subscriber.retry);
    subscriber.retry = undefined;
    try {
      for (;;) {
        subscriber.again = false;
        const { events: page, newest } = await this.readPage(subscriber.lastDelivered, PAGE);
        for (const event of page) {
          if (subscriber.closed) return;
          subscriber.lastDelivered = event.position;
          try {
            subscriber.onEvent(event);
          } catch (error) {
            return this.stop(subscriber, error as Error);
          }
        }
        if (page.length < PAGE && !subscriber.again) {
          // Rows past the page are committed but not finished in log order: the transaction
          // holding them back may end without any notification (a heartbeat, another client's
          // write), so read again soon rather than at the next poll.
          if (newest > subscriber.lastDelivered) this.readAgainLater(subscriber, page.length > 0);
          else this.caughtUp(subscriber);
          return;
        }
      }
    } catch (error) {
      this.stop(subscriber, error as Error);
    } finally {
      subscriber.pumping = false;
    }
  }

  private readAgainLater(subscriber: Subscriber, progressed: boolean): void {
    if (progressed) subscriber.retryMs = 0;
    if (subscriber.retry) return;
    subscriber.retryMs = subscriber.retryMs === 0 ? HELD_BACK_FIRST_RETRY_MS : Math.min(this.pollIntervalMs, HELD_BACK_MAX_RETRY_MS, subscriber.retryMs * 2);
    subscriber.retry = setTimeout(() => {
      subscriber.retry = undefined;
      void this.pump(subscriber);
    }, subscriber.retryMs);
    subscriber.retry.unref();
  }

  private caughtUp(subscriber: Subscriber): void {
    clearTimeout(subscriber.retry);
    subscriber.retry = undefined;
    subscriber.retryMs = 0;
  }

  /** A subscription stops at its first failure and says so once (port.ts). */
  private stop(subscriber: Subscriber, error: Error): void {
    if (subscriber.closed) return;
    subscriber.closed = true;
    clearTimeout(subscriber.retry);
    this.subscribers.delete(subscriber);
    subscriber.onError?.(error);
  }
}
