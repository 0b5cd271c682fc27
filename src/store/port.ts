// The event store port. Small on purpose: every adapter implements exactly this, and
// test/store/contract.ts holds them to the same behaviour (docs/architecture.md, "Event store").

/** `no_stream`: the stream must not exist; a number: the revision of the stream's last event. */
export type ExpectedRevision = 'any' | 'no_stream' | number;

export interface EventToAppend {
  type: string;
  data: unknown;
  metadata?: Record<string, unknown>;
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  streamName: string;
  /** 0-based position of the event inside its stream. */
  revision: number;
  /** Global position in the log: strictly increasing across all streams, > 0. */
  position: number;
  type: Type;
  data: Data;
  metadata: Record<string, unknown> | undefined;
  /** When the store recorded it (ISO-8601 UTC). */
  created: string;
}

/**
 * A second stream written by the same atomic append: its events go in with the main stream's, or
 * nothing does. With no events it is only checked. This is how a request fences its writes with
 * its Idempotency-Key claim: the append carries the claim stream's revision as it left it, and
 * fails whole if another request has taken the claim over since.
 */
export interface AlongsideWrite {
  streamName: string;
  expectedRevision: number | 'no_stream';
  events: EventToAppend[];
}

export interface AppendOptions {
  expectedRevision?: ExpectedRevision;
  alongside?: AlongsideWrite;
}

export interface AppendResult {
  /** Revision of the last event appended to the stream. */
  nextExpectedRevision: number;
  /** Global position of the last event appended (of either stream). */
  position: number;
  /** With `alongside`: that stream's revision after the append. */
  alongsideRevision?: number;
}

/**
 * One process's heartbeat, as the store keeps it (one row per instance, replaced at each beat).
 * Nodes read each other's to agree on one clock and to tell a live node from a dead one.
 */
export interface NodeBeat {
  /** NODE_ID. */
  node: string;
  /** Unique per process start. */
  instance: string;
  /** When the instance started, on the log's clock (ISO-8601 UTC). */
  started: string;
  /** The instance's own clock (ms since the epoch, not corrected) when it wrote this beat. */
  clockMs: number;
  /** Increases with each beat of the instance: a row whose count stops moving is a dead instance. */
  count: number;
}

export interface BeatReading {
  /** Every instance's last beat, this one's included. */
  beats: NodeBeat[];
  /**
   * The store server's own clock while it recorded this beat (ms since the epoch), where the store
   * has a clock of its own (PostgreSQL, EventStoreDB); undefined for SQLite.
   */
  storeClockMs?: number;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

/**
 * Subscription semantics, as the store that openStore (src/core.ts) hands out keeps them: an
 * adapter wrapped in resumingStore (src/store/resuming.ts).
 *
 * - Delivery: onEvent is called once per event, in strictly increasing position order, catch-up
 *   first and then live, with no gaps and no duplicates, until unsubscribe(). Nothing else ends
 *   a subscription.
 * - onError tells of trouble; none of it stops the subscription:
 *   - SubscriptionInterruptedError: the connection failed, the server ended the stream (an end
 *     is always reported, never silent), or the store handed over an event whose position was
 *     not greater than the last delivered one (OutOfOrderEventError: asserted, never dropped).
 *     The subscription resumes by itself from the last delivered position, so nothing is lost
 *     or repeated, after a backoff that doubles with each interruption in a row.
 *   - EventHandlerError: onEvent threw. The event counts as delivered (delivering it again
 *     would throw again) and delivery goes on with the next one.
 *
 * An adapter's own subscription is simpler: it stops at the first failure or at the end of its
 * stream, reports that once through onError (an end as SubscriptionEndedError), and delivers
 * nothing after it; resumingStore adds the rest.
 */
export interface SubscribeOptions {
  /** Deliver events with a global position greater than this (0: from the start). */
  after: number;
  /** Called once per event, in position order, catch-up first and then live, with no gaps. */
  onEvent(event: RecordedEvent): void;
  onError?(error: Error): void;
}

export interface EventStore {
  /**
   * Appends atomically (with `alongside`, both streams or neither). Rejects with ConcurrencyError
   * (src/domain/errors.ts, naming the stream that did not match) when an expected revision does
   * not match, and with RecordTooLargeError when the events are more than the store takes in one
   * append. Any other rejection is the store's own failure.
   */
  append(streamName: string, events: EventToAppend[], options?: AppendOptions): Promise<AppendResult>;
  /** The whole stream, oldest first; [] when it does not exist. */
  readStream(streamName: string): Promise<RecordedEvent[]>;
  /** Events after a global position, oldest first, at most `limit` of them. */
  readAll(options: { after: number; limit: number }): Promise<RecordedEvent[]>;
  subscribeToAll(options: SubscribeOptions): Subscription;
  /** Global position of the newest event in the log; 0 when the log is empty. */
  headPosition(): Promise<number>;
  /**
   * Removes whole streams that are no longer needed (retention of ended anonymous clients and
   * finished sign-ins): they read as [] afterwards. Positions never move back: a stream holding
   * the log's newest event may be kept until a later call; it is named in the answer. Missing
   * streams are ignored.
   */
  deleteStreams(streamNames: readonly string[]): Promise<{ kept: string[] }>;
  /**
   * Records this instance's heartbeat (replacing its previous one), forgets the instances named
   * in `forget` (judged dead by the caller), and returns every instance's last beat.
   */
  beat(mine: NodeBeat, forget?: readonly string[]): Promise<BeatReading>;
  /**
   * How long committed events have waited to become readable in log order, in ms (0: none
   * wait). Only where something outside the log can hold followers back: on PostgreSQL, a
   * transaction that wrote and stays open (docs/architecture.md, "Event store").
   */
  heldBackMs?(): number;
  close(): Promise<void>;
}

/** The server ended a subscription's stream (it is never expected to end on its own). */
export class SubscriptionEndedError extends Error {
  constructor() {
    super('The event store ended the subscription');
    this.name = 'SubscriptionEndedError';
  }
}

/** The store handed over an event at or before the last delivered position. */
export class OutOfOrderEventError extends Error {
  constructor(
    readonly position: number,
    readonly lastDelivered: number,
  ) {
    super(`The event store delivered position ${position} after position ${lastDelivered}`);
    this.name = 'OutOfOrderEventError';
  }
}

/** A subscription stopped receiving; it resumes after `after` in `retryInMs`. */
export class SubscriptionInterruptedError extends Error {
  constructor(
    override readonly cause: Error,
    /** The last delivered position: the subscription resumes after it. */
    readonly after: number,
    /** Interruptions in a row without an event delivered in between, this one included. */
    readonly attempt: number,
    readonly retryInMs: number,
  ) {
    super(`The event store subscription was interrupted (${cause.message}); resuming after position ${after} in ${retryInMs} ms`);
    this.name = 'SubscriptionInterruptedError';
  }
}

/** onEvent threw on an event; delivery went on with the next one. */
export class EventHandlerError extends Error {
  constructor(
    readonly event: RecordedEvent,
    override readonly cause: Error,
  ) {
    super(`The subscriber failed on the event at position ${event.position} (${event.type}): ${cause.message}`);
    this.name = 'EventHandlerError';
  }
}
