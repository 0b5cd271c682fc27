// Event store on EventStoreDB (@eventstore/db-client 6.x), for deployments that run one.
//
// A thin translation of the port onto the client; the behaviour test/store/contract.ts asks
// for (exclusive positions, typed concurrency errors, [] for a missing stream) is added here.
//
// Positions: the port's numeric `position` is the event's commit position in $all. EventStoreDB
// writes every event of an append as its own committed record, so commit positions are distinct
// and increase event by event (only the long-gone explicit TCP transactions shared one). They
// are byte offsets in the transaction log, held here as a JS number: exact up to 2^53 bytes
// (8 PiB) of log, far beyond any store this service will meet. A numeric position p is turned
// back into {commit: p, prepare: p}, which is what an event's own position looks like.
//
// System events (type starting with `$`: stats, link events, stream metadata) are not part of
// the domain log and are hidden, as `excludeSystemEvents()` does for subscriptions; so are the
// nodes' heartbeats (their own stream, see beat()).
//
// No multi-stream transaction exists in client 6.x: an append with `alongside` (a fenced write)
// is refused, never emulated with a check and a second write that another node could slip between.
//
// Transient trouble (the server unreachable, a leader change, a deadline or commit timeout) is
// retried within a window; a subscription stops at its first failure or end and says so, and
// resumingStore (src/core.ts puts it around this adapter) resumes it.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ANY,
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  MaxAppendSizeExceededError,
  NO_STREAM,
  NotLeaderError,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AppendExpectedRevision,
  type EventData,
  type CurrentRevision,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { ConcurrencyError, RecordTooLargeError } from '../domain/errors.js';
import { forEventStoreDbClient } from './connectionString.js';
import {
  OutOfOrderEventError,
  SubscriptionEndedError,
  type AppendOptions,
  type AppendResult,
  type BeatReading,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type NodeBeat,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './port.js';
import { resumeDelay, type ResumeBackoff } from './resuming.js';

/** What the adapter uses of the client (a test passes a stand-in). */
export type EventStoreDbClientApi = Pick<
  EventStoreDBClient,
  'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll' | 'deleteStream' | 'setStreamMetadata' | 'dispose'
>;

/** An append with `alongside`: this store cannot write or check two streams in one atomic step. */
export class MultiStreamAppendUnsupportedError extends Error {
  override readonly name = 'MultiStreamAppendUnsupportedError';
  constructor(streamName: string, alongside: string) {
    super(
      `EventStoreDB cannot append to ${streamName} and check ${alongside} in one atomic write: fenced writes need a store with atomic multi-stream appends (SQLite, PostgreSQL)`,
    );
  }
}

export interface RetryPolicy extends ResumeBackoff {
  /** No new attempt starts once this much time has passed since the first one. */
  windowMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { windowMs: 10_000, firstDelayMs: 100, maxDelayMs: 2000 };

/** How many of a stream's newest events a retried 'any' append looks through for its own. */
const RETRY_LOOKBACK = 100;

/**
 * Every node's heartbeats, in one stream read back newest first: finding per-instance streams
 * would take the server's category projection, which a server need not run. The server keeps
 * only the newest BEAT_WINDOW events ($maxCount), and that many are read: an instance whose last
 * beat is older than the window is gone from the answer, as a forgotten one is.
 */
const BEAT_STREAM = 'nodebeats';
const BEAT_WINDOW = 256;

/** Failures that say nothing about the request itself: another attempt may well succeed. */
function isTransient(error: unknown): boolean {
  return error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof TimeoutError || error instanceof NotLeaderError;
}

function toPosition(position: number): ReadPosition {
  return position > 0 ? { commit: BigInt(position), prepare: BigInt(position) } : START;
}

function positionOf(streamName: string, position: Position | undefined): number {
  // Events read from a single stream carry their position only from EventStoreDB 22.6 on.
  if (!position) throw new Error(`EventStoreDB did not report the position of an event in ${streamName}: version 22.6 or later is required`);
  return Number(position.commit);
}

function toExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return BigInt(expected);
}

function fromCurrent(current: CurrentRevision): number | 'no_stream' {
  return current === NO_STREAM ? 'no_stream' : Number(current);
}

/** Not part of the domain log: the server's system events and the heartbeats. */
function isHidden(event: EsdbRecordedEvent): boolean {
  return event.type.startsWith('$') || event.streamId === BEAT_STREAM;
}

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    streamName: event.streamId,
    revision: Number(event.revision),
    position: positionOf(event.streamId, event.position),
    type: event.type,
    data: event.data,
    // The client parses JSON metadata and gives undefined when there is none.
    metadata: event.metadata as Record<string, unknown> | undefined,
    created: event.created.toISOString(),
  };
}

export class EventStoreDbEventStore implements EventStore {
  private readonly client: EventStoreDbClientApi;
  private readonly subscriptions = new Set<Subscription>();
  private beatStreamBounded = false;

  /** @param connection e.g. `esdb://localhost:2113?tls=false` (or `kurrentdb://…`), or a client */
  constructor(
    connection: string | EventStoreDbClientApi,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    this.client = typeof connection === 'string' ? EventStoreDBClient.connectionString(forEventStoreDbClient(connection)) : connection;
  }

  async append(streamName: string, events: EventToAppend[], options: AppendOptions = {}): Promise<AppendResult> {
    if (events.length === 0) throw new Error('Nothing to append');
    if (options.alongside) throw new MultiStreamAppendUnsupportedError(streamName, options.alongside.streamName);
    const expected = options.expectedRevision ?? 'any';
    // Ids are given once, before the first attempt: every retry sends the very same events.
    const eventData = events.map((e) => jsonEvent({ id: randomUUID(), type: e.type, data: e.data as JSONType, metadata: e.metadata }));
    try {
      return await this.retrying((attempt) => this.appendOnce(streamName, eventData, expected, attempt > 1));
    } catch (error) {
      // 'any' never conflicts, so a conflict always has a revision or 'no_stream' as expected.
      if (error instanceof WrongExpectedVersionError) throw new ConcurrencyError(streamName, expected as number | 'no_stream', fromCurrent(error.actualVersion));
      if (error instanceof MaxAppendSizeExceededError) {
        throw new RecordTooLargeError(`The events are larger than the event store accepts in one append (${error.maxAppendSize} bytes)`);
      }
      throw error;
    }
  }

  /**
   * One attempt. A retry cannot append twice: an attempt that failed may still have been written,
   * but the retry carries the same event ids. With an expected revision, EventStoreDB finds those
   * ids at that revision and answers success without writing them again (its idempotent append);
   * with 'any' it does so only while it still has the ids in its cache of recent writes, so a
   * retried 'any' append first looks for them at the end of the stream itself.
   */
  private async appendOnce(streamName: string, eventData: EventData[], expected: ExpectedRevision, isRetry: boolean): Promise<AppendResult> {
    if (isRetry && expected === 'any') {
      const written = await this.findWritten(streamName, eventData);
      if (written) return written;
    }
    const result = await this.client.appendToStream(streamName, eventData, { expectedRevision: toExpected(expected) });
    if (!result.success) {
      // Only reached when the connection string sets throwOnAppendFailure=false.
      throw new ConcurrencyError(streamName, expected as number | 'no_stream', result.nextExpectedRevision < 0n ? 'no_stream' : Number(result.nextExpectedRevision));
    }
    // An idempotent answer may come without a position: read it back then.
    if (!result.position && isRetry) {
      const written = await this.findWritten(streamName, eventData);
      if (written) return written;
    }
    return { nextExpectedRevision: Number(result.nextExpectedRevision), position: positionOf(streamName, result.position) };
  }

  /** Where the last of `eventData` was written, if it is among the stream's newest events. */
  private async findWritten(streamName: string, eventData: EventData[]): Promise<AppendResult | undefined> {
    const lastId = eventData.at(-1)!.id;
    try {
      for await (const resolved of this.client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: RETRY_LOOKBACK })) {
        const event = resolved.event;
        if (event?.id === lastId) return { nextExpectedRevision: Number(event.revision), position: positionOf(streamName, event.position) };
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return undefined;
      throw error;
    }
    return undefined;
  }

  readStream(streamName: string): Promise<RecordedEvent[]> {
    return this.retrying(async () => {
      const events: RecordedEvent[] = [];
      try {
        for await (const resolved of this.client.readStream(streamName)) {
          if (resolved.event) events.push(toRecorded(resolved.event));
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return [];
        throw error;
      }
      return events;
    });
  }

  readAll(options: { after: number; limit: number }): Promise<RecordedEvent[]> {
    return this.retrying(() => this.readAllOnce(options));
  }

  private async readAllOnce(options: { after: number; limit: number }): Promise<RecordedEvent[]> {
    // readAll in client 6.x takes no server-side filter, so system events are dropped here and
    // the read goes on page by page until `limit` domain events are found or $all ends.
    const events: RecordedEvent[] = [];
    let seen = options.after;
    while (events.length < options.limit) {
      // A forward read includes the event at its start position: ask for one more.
      const pageSize = options.limit - events.length + 1;
      let read = 0;
      for await (const resolved of this.client.readAll({ fromPosition: toPosition(seen), maxCount: pageSize })) {
        read += 1;
        const event = resolved.event;
        if (!event) continue;
        const position = Number(event.position.commit);
        // The page starts at the last event seen (inclusive); anything before it is out of order.
        if (position === seen && read === 1) continue;
        if (position <= seen) throw new OutOfOrderEventError(position, seen);
        seen = position;
        if (!isHidden(event)) events.push(toRecorded(event));
      }
      if (read < pageSize) break; // the end of $all
    }
    return events;
  }

  headPosition(): Promise<number> {
    return this.retrying(async () => {
      // The newest domain event: read $all backwards past any system events written after it.
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: END })) {
        const event = resolved.event;
        if (event && !isHidden(event)) return Number(event.position.commit);
      }
      return 0;
    });
  }

  async deleteStreams(streamNames: readonly string[]): Promise<{ kept: string[] }> {
    // A soft delete: the streams read as not found at once, and the server's scavenge (an
    // operator's routine task) reclaims their space. Another node may have deleted one first.
    for (const streamName of streamNames) {
      try {
        await this.client.deleteStream(streamName);
      } catch (error) {
        if (!(error instanceof StreamNotFoundError || error instanceof StreamDeletedError)) throw error;
      }
    }
    return { kept: [] };
  }

  /**
   * Appends the beat (with a NodeForgotten per instance in `forget`, in the same append) to the
   * heartbeat stream and reads its newest events back: per instance, the newest one decides.
   * The store's clock is the server's `created` stamp of this beat.
   */
  async beat(mine: NodeBeat, forget: readonly string[] = []): Promise<BeatReading> {
    if (!this.beatStreamBounded) {
      await this.retrying(() => this.client.setStreamMetadata(BEAT_STREAM, { maxCount: BEAT_WINDOW }));
      this.beatStreamBounded = true;
    }
    const beat: NodeBeat = { node: mine.node, instance: mine.instance, started: mine.started, clockMs: mine.clockMs, count: mine.count };
    const written = [
      ...forget.map((instance) => jsonEvent({ id: randomUUID(), type: 'NodeForgotten', data: { instance } })),
      jsonEvent({ id: randomUUID(), type: 'NodeBeat', data: { ...beat } }),
    ];
    await this.retrying((attempt) => this.appendOnce(BEAT_STREAM, written, 'any', attempt > 1));
    return this.retrying(async () => {
      const decided = new Set<string>();
      const beats: NodeBeat[] = [];
      let storeClockMs: number | undefined;
      for await (const resolved of this.client.readStream(BEAT_STREAM, { direction: BACKWARDS, fromRevision: END, maxCount: BEAT_WINDOW })) {
        const event = resolved.event;
        if (!event) continue;
        if (event.id === written.at(-1)!.id) storeClockMs = event.created.getTime();
        const data = event.data as Partial<NodeBeat>;
        if (typeof data.instance !== 'string' || decided.has(data.instance)) continue;
        decided.add(data.instance);
        if (event.type === 'NodeBeat') beats.push(data as NodeBeat);
      }
      return { beats: beats.sort((a, b) => a.node.localeCompare(b.node) || a.instance.localeCompare(b.instance)), storeClockMs };
    });
  }

  /** Stops at the first failure or end of the server's stream and reports it (see port.ts). */
  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscription = this.client.subscribeToAll({ fromPosition: toPosition(options.after), filter: excludeSystemEvents() });
    let stopped = false;
    const stop = () => {
      stopped = true;
      this.subscriptions.delete(handle);
    };
    const fail = (error: Error) => {
      if (stopped) return;
      stop();
      void subscription.unsubscribe().catch(() => undefined);
      options.onError?.(error);
    };
    subscription.on('data', (resolved) => {
      if (stopped || !resolved.event || isHidden(resolved.event)) return;
      try {
        const recorded = toRecorded(resolved.event);
        // A subscription from a position starts after it; should the server hand over the event
        // at that very position, it is the one the subscriber named as already had. Any other
        // event at or before it goes through and is reported as out of order.
        if (recorded.position === options.after) return;
        options.onEvent(recorded);
      } catch (error) {
        fail(error as Error);
      }
    });
    subscription.on('error', (error) => fail(error));
    subscription.on('end', () => fail(new SubscriptionEndedError()));
    subscription.on('close', () => fail(new SubscriptionEndedError()));
    const handle: Subscription = {
      unsubscribe: async () => {
        if (stopped) return;
        stop();
        await subscription.unsubscribe();
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  async close(): Promise<void> {
    // Cancel the live subscriptions first so their streams end quietly rather than erroring.
    await Promise.all([...this.subscriptions].map((s) => s.unsubscribe()));
    await this.client.dispose();
  }

  /** Runs `attempt` again after a transient failure, with a backoff, within the retry window. */
  private async retrying<T>(attempt: (n: number) => Promise<T>): Promise<T> {
    const started = Date.now();
    for (let n = 1; ; n++) {
      try {
        return await attempt(n);
      } catch (error) {
        const delayMs = resumeDelay(n, this.retry);
        if (!isTransient(error) || Date.now() - started + delayMs > this.retry.windowMs) throw error;
        await sleep(delayMs);
      }
    }
  }
}
