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
// Every read is a call the client opens without a deadline: each one is bounded (maxCount) and
// ended on every path (eventstoredbReads.ts); the subscription is read with backpressure
// (eventstoredbSubscription.ts).
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
  type AllStreamRecordedEvent,
  type AppendExpectedRevision,
  type CurrentRevision,
  type EventData,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { ConcurrencyError, NotConfiguredError, RecordTooLargeError } from '../domain/errors.js';
import { upcast } from '../domain/eventVersions.js';
import { forEventStoreDbClient } from './connectionString.js';
import { ignoredParameterProblem } from './eventstoredbConnection.js';
import { HeadKnowledge, readHead } from './eventstoredbHead.js';
import { untilEnded } from './eventstoredbReads.js';
import { SUBSCRIPTION_BUFFER, follow } from './eventstoredbSubscription.js';
import {
  OutOfOrderEventError,
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
export type EventStoreDbClientApi = Pick<EventStoreDBClient, 'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll' | 'deleteStream' | 'setStreamMetadata' | 'dispose'>;

/**
 * An append with `alongside`: this store cannot write or check two streams in one atomic step.
 * Only requests with an Idempotency-Key fence their writes: such a request is answered 503 with
 * this message (nothing was written, and the key is free again).
 */
export class MultiStreamAppendUnsupportedError extends NotConfiguredError {
  constructor() {
    super(
      'Idempotency-Key is not supported for this request on EventStoreDB: its write must be fenced by the key in one atomic append to two streams, which the EventStoreDB client cannot make; send it without the header, or run the service on SQLite or PostgreSQL',
    );
  }
}

export interface RetryPolicy extends ResumeBackoff {
  /** No new attempt starts once this much time has passed since the first one. */
  windowMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { windowMs: 10_000, firstDelayMs: 100, maxDelayMs: 2000 };

/** Events per forward read of $all; readAll reads as many pages as its `limit` takes. */
export const READ_PAGE = 512;

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
function isHidden(event: EsdbRecordedEvent | AllStreamRecordedEvent): boolean {
  return event.type.startsWith('$') || event.streamId === BEAT_STREAM;
}

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    streamName: event.streamId,
    revision: Number(event.revision),
    position: positionOf(event.streamId, event.position),
    type: event.type,
    data: upcast(event.type, event.data),
    // The client parses JSON metadata and gives undefined when there is none.
    metadata: event.metadata as Record<string, unknown> | undefined,
    created: event.created.toISOString(),
  };
}

export class EventStoreDbEventStore implements EventStore {
  private readonly client: EventStoreDbClientApi;
  private readonly subscriptions = new Set<Subscription>();
  private readonly head = new HeadKnowledge();
  private beatStreamBounded = false;

  /**
   * @param connection e.g. `esdb://localhost:2113?tls=false` (or `kurrentdb://…`), or a client.
   * A string with a parameter the client would ignore (tlsVerifyCert=false) is refused here.
   */
  constructor(
    connection: string | EventStoreDbClientApi,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    if (typeof connection === 'string') {
      const problem = ignoredParameterProblem(connection);
      if (problem) throw new Error(`EVENTSTORE_CONNECTION_STRING: ${problem}`);
      this.client = EventStoreDBClient.connectionString(forEventStoreDbClient(connection));
    } else {
      this.client = connection;
    }
  }

  async append(streamName: string, events: EventToAppend[], options: AppendOptions = {}): Promise<AppendResult> {
    if (events.length === 0) throw new Error('Nothing to append');
    if (options.alongside) throw new MultiStreamAppendUnsupportedError();
    const expected = options.expectedRevision ?? 'any';
    // Ids are given once, before the first attempt: every retry sends the very same events.
    const eventData = events.map((e) => jsonEvent({ id: randomUUID(), type: e.type, data: e.data as JSONType, metadata: e.metadata }));
    try {
      return await this.retrying(() => this.appendOnce(streamName, eventData, expected));
    } catch (error) {
      // 'any' never conflicts.
      if (error instanceof WrongExpectedVersionError && expected !== 'any') throw new ConcurrencyError(streamName, expected, fromCurrent(error.actualVersion));
      if (error instanceof MaxAppendSizeExceededError) {
        throw new RecordTooLargeError(`The events are larger than the event store accepts in one append (${error.maxAppendSize} bytes)`);
      }
      throw error;
    }
  }

  /**
   * One attempt. With an expected revision, a retry cannot append twice: an attempt whose answer
   * was lost may have been written, but the retry carries the same event ids, which EventStoreDB
   * finds at that revision and answers as a success without writing them again (its idempotent
   * append). With 'any' it finds them only while they are in its cache of recent writes: the
   * service's commands always carry a revision, and only heartbeats append with 'any' (a beat
   * written twice changes nothing).
   */
  private async appendOnce(streamName: string, eventData: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    const result = await this.client.appendToStream(streamName, eventData, { expectedRevision: toExpected(expected) });
    if (!result.success) {
      // Only with throwOnAppendFailure=false in the connection string. The revision the client
      // then reports is not the stream's (its batch append turns a flag into it): read it.
      const current = await this.lastRevision(streamName);
      throw new WrongExpectedVersionError(undefined, { streamName, expected: toExpected(expected), current: current === 'no_stream' ? NO_STREAM : BigInt(current) });
    }
    // An idempotent answer comes without a position: the last event's is read back.
    const position = result.position ?? (await this.positionAt(streamName, result.nextExpectedRevision));
    return { nextExpectedRevision: Number(result.nextExpectedRevision), position: positionOf(streamName, position) };
  }

  /** The revision of the stream's last event; 'no_stream' when it does not exist or was deleted. */
  private async lastRevision(streamName: string): Promise<number | 'no_stream'> {
    try {
      for await (const { event } of untilEnded(this.client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 }))) {
        if (event) return Number(event.revision);
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError || error instanceof StreamDeletedError)) throw error;
    }
    return 'no_stream';
  }

  private async positionAt(streamName: string, revision: bigint): Promise<Position | undefined> {
    for await (const { event } of untilEnded(this.client.readStream(streamName, { fromRevision: revision, maxCount: 1 }))) {
      if (event) return event.position;
    }
    return undefined;
  }

  readStream(streamName: string): Promise<RecordedEvent[]> {
    return this.retrying(async () => {
      const events: RecordedEvent[] = [];
      try {
        for await (const { event } of untilEnded(this.client.readStream(streamName))) {
          if (event) events.push(toRecorded(event));
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

  private async readAllOnce({ after, limit }: { after: number; limit: number }): Promise<RecordedEvent[]> {
    // readAll in client 6.x takes no server-side filter, so hidden events are dropped here and
    // the read goes on page by page until `limit` domain events are found or $all ends.
    const events: RecordedEvent[] = [];
    let seen = after;
    while (events.length < limit) {
      // A read from an event's position starts with that event, already had: one more is asked
      // for. A read from the start (0) has none.
      const overlap = seen > 0 ? 1 : 0;
      const pageSize = Math.min(limit - events.length, READ_PAGE) + overlap;
      const pageAfter = seen;
      let newestDomain: number | undefined;
      let read = 0;
      for await (const { event } of untilEnded(this.client.readAll({ fromPosition: toPosition(seen), maxCount: pageSize }))) {
        read += 1;
        if (!event) continue;
        const position = Number(event.position.commit);
        if (position === seen && read === 1 && overlap === 1) continue;
        if (position <= seen) throw new OutOfOrderEventError(position, seen);
        seen = position;
        if (isHidden(event)) continue;
        events.push(toRecorded(event));
        newestDomain = position;
        if (events.length === limit) break;
      }
      this.head.covered(pageAfter, seen, newestDomain);
      if (events.length === limit || read < pageSize) break; // enough, or the end of $all
    }
    return events;
  }

  headPosition(): Promise<number> {
    return this.retrying(() => readHead(this.client, this.head, isHidden));
  }

  async deleteStreams(streamNames: readonly string[]): Promise<{ kept: string[] }> {
    // A soft delete: the streams read as not found at once, and the server's scavenge (an
    // operator's routine task) reclaims their space. Until then their events stay in $all, so
    // retention finds them due again at every start: a stream that already reads as not found
    // (deleted before, or by another node) is not deleted again, each delete being a write.
    for (const streamName of streamNames) {
      if ((await this.retrying(() => this.lastRevision(streamName))) === 'no_stream') continue;
      try {
        await this.retrying(() => this.client.deleteStream(streamName));
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
    const beatId = written.at(-1)!.id;
    await this.retrying(() => this.appendOnce(BEAT_STREAM, written, 'any'));
    return this.retrying(async () => {
      const decided = new Set<string>();
      const beats: NodeBeat[] = [];
      let storeClockMs: number | undefined;
      for await (const { event } of untilEnded(this.client.readStream(BEAT_STREAM, { direction: BACKWARDS, fromRevision: END, maxCount: BEAT_WINDOW }))) {
        if (!event) continue;
        // Newest first: a retry that wrote the beat twice is stamped by its later copy.
        if (event.id === beatId) storeClockMs ??= event.created.getTime();
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
    const stream = this.client.subscribeToAll({ fromPosition: toPosition(options.after), filter: excludeSystemEvents() }, { highWaterMark: SUBSCRIPTION_BUFFER });
    let previous = options.after;
    const following = follow(
      stream,
      ({ event }) => {
        if (!event) return;
        const position = Number(event.position.commit);
        // A subscription from a position starts after it; should the server hand over the event
        // at that very position, it is the one the subscriber named as already had. Any other
        // event at or before it goes through and is reported as out of order.
        if (position === options.after) return;
        const hidden = isHidden(event);
        // The server leaves out only `$` events (hidden): everything up to here has been seen.
        if (position > previous) this.head.covered(previous, position, hidden ? undefined : position);
        previous = Math.max(previous, position);
        if (!hidden) options.onEvent(toRecorded(event));
      },
      (error) => {
        this.subscriptions.delete(handle);
        options.onError?.(error);
      },
    );
    const handle: Subscription = {
      unsubscribe: async () => {
        this.subscriptions.delete(handle);
        await following.stop();
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
  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    const started = Date.now();
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (error) {
        const delayMs = resumeDelay(n, this.retry);
        if (!isTransient(error) || Date.now() - started + delayMs > this.retry.windowMs) throw error;
        await sleep(delayMs);
      }
    }
  }
}
