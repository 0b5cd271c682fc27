// The event store port (design.md §3). Small on purpose: both adapters implement exactly this,
// and test/store/contract.ts holds them to the same behaviour.

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

export interface AppendResult {
  /** Revision of the last event appended to the stream. */
  nextExpectedRevision: number;
  /** Global position of the last event appended. */
  position: number;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

export interface SubscribeOptions {
  /** Deliver events with a global position greater than this (0: from the start). */
  after: number;
  /** Called once per event, in position order, catch-up first and then live, with no gaps. */
  onEvent(event: RecordedEvent): void;
  onError?(error: Error): void;
}

export interface EventStore {
  /**
   * Appends atomically. Rejects with ConcurrencyError (src/domain/errors.ts) when
   * `expectedRevision` does not match the stream.
   */
  append(streamName: string, events: EventToAppend[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult>;
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
  close(): Promise<void>;
}
