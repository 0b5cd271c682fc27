// An in-memory stand-in for the EventStoreDB client (@eventstore/db-client 6.x), for the
// adapter's tests: no server can run here. Where the adapter depends on it, it behaves as the
// real client over a real server does:
// - A streaming read (readAll, readStream) is a call the server holds open until the read is
//   consumed to its end or cancel() is called; destroying the stream (leaving a `for await`)
//   does not end it. `maxCount` bounds what the server sends. A forward read of $all from a
//   position starts with the event at it; a backward one starts with the event before it.
// - Backpressure: the server sends only while the stream's buffer has room (its highWaterMark);
//   a stream nobody reads stops receiving. Subscriptions get live events as they are appended.
// - Failures arrive as the client's own error classes, emitted on the stream the way the client
//   emits them; a stream not found is an error of the read. A soft delete writes a `$metadata`
//   event, hides the stream from reads and leaves its events in $all.
// - With throwOnAppendFailure=false a conflicting append resolves with `success: false` and the
//   current revision as client 6.x's batch append reports it: BigInt(true), whatever the stream's.
import { randomUUID } from 'node:crypto';
import { Readable, type ReadableOptions } from 'node:stream';
import { StreamNotFoundError, WrongExpectedVersionError, type AppendExpectedRevision, type EventData } from '@eventstore/db-client';

export interface Stored {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: unknown;
  metadata: unknown;
  created: Date;
  position: { commit: bigint; prepare: bigint };
}

/** What the next appendToStream call does wrong: fail before writing, or write and lose the answer. */
export type AppendFault = { before: Error } | { after: Error };

/** A read that fails: the server sends `afterItems` events (default none), then the error. */
export interface ReadFault {
  error: Error;
  afterItems?: number;
}

/** One streaming call, as the server sees it. */
export interface Call {
  method: 'readAll' | 'readStream' | 'subscribeToAll';
  options: Record<string, unknown>;
  /** Open on the server: neither read to its end, failed, nor cancelled. */
  open: boolean;
  /** Events the server has sent on it. */
  sent: number;
}

type Position = { commit: bigint; prepare: bigint };

const resolved = (event: Stored) => ({ event: { ...event, isJson: true } });

/** The client's ReadStream: a Transform in object mode, highWaterMark 16 unless told. */
export class FakeRead extends Readable {
  constructor(
    readonly call: Call,
    private readonly items: readonly Stored[],
    private readonly fault: ReadFault | undefined,
    options: ReadableOptions = {},
  ) {
    super({ ...options, objectMode: true });
    this.once('end', () => (this.call.open = false));
  }

  override _read(): void {
    while (this.call.open) {
      if (this.fault && this.call.sent === (this.fault.afterItems ?? 0)) {
        this.serverFails(this.fault.error);
        return;
      }
      const next = this.items[this.call.sent];
      if (!next) {
        this.push(null);
        return;
      }
      this.call.sent += 1;
      if (!this.push(resolved(next))) return;
    }
  }

  /** The call ends with an error status: the client emits it on the stream (not destroying it). */
  private serverFails(error: Error): void {
    this.call.open = false;
    process.nextTick(() => this.emit('error', error));
  }

  /** As the client's: cancels the call on the next turn; the stream then ends. */
  async cancel(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (!this.call.open) return;
    this.call.open = false;
    if (!this.destroyed) this.push(null);
  }
}

/** The client's Subscription: catch-up from the log, then live events as they are appended. */
export class FakeSubscription extends Readable {
  private readonly pending: Stored[] = [];
  private wanted = false;
  /** The most events the stream's buffer held at once. */
  maxBuffered = 0;

  constructor(
    readonly call: Call,
    readonly fromPosition: unknown,
    private readonly excludeSystem: boolean,
    backlog: readonly Stored[],
    options: ReadableOptions = {},
  ) {
    super({ ...options, objectMode: true });
    this.pending.push(...backlog.filter((e) => this.passes(e)));
  }

  /** Events still on the server, held back by backpressure. */
  get held(): number {
    return this.pending.length;
  }

  private passes(event: Stored): boolean {
    return !(this.excludeSystem && event.type.startsWith('$'));
  }

  /** The server sends these (filtered as subscribed) once the stream has room. */
  deliver(events: readonly Stored[]): void {
    if (!this.call.open) return;
    this.pending.push(...events.filter((e) => this.passes(e)));
    this.pump();
  }

  override _read(): void {
    this.wanted = true;
    this.pump();
  }

  /** Sends while the stream wants more: from its _read() until a push() says its buffer is full. */
  private pump(): void {
    while (this.wanted && this.call.open && !this.destroyed && this.pending.length > 0) {
      this.call.sent += 1;
      this.wanted = this.push(resolved(this.pending.shift()!));
      this.maxBuffered = Math.max(this.maxBuffered, this.readableLength);
    }
  }

  /** The server ends the call (it never should). */
  serverEnds(): void {
    this.call.open = false;
    this.push(null);
  }

  /** The call fails (the connection dropped, the server went away). */
  serverFails(error: Error): void {
    this.call.open = false;
    this.emit('error', error);
  }

  async unsubscribe(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (!this.call.open) return;
    this.call.open = false;
    if (!this.destroyed) this.push(null);
  }
}

export class FakeClient {
  /** $all: every event, system ones included. */
  readonly log: Stored[] = [];
  readonly appendFaults: AppendFault[] = [];
  /** Faults of the next streaming reads, one per call. */
  readonly readFaults: ReadFault[] = [];
  /** Event ids of every appendToStream call. */
  readonly appendCalls: string[][] = [];
  readonly deleteCalls: string[] = [];
  readonly calls: Call[] = [];
  readonly subscriptions: FakeSubscription[] = [];
  readonly metadata = new Map<string, unknown>();
  /** Per stream, the first revision reads still show (a soft delete moves it past the last event). */
  private readonly truncatedBefore = new Map<string, bigint>();
  throwOnAppendFailure = true;

  /** Calls the server still holds open. */
  openCalls(): Call[] {
    return this.calls.filter((c) => c.open);
  }

  /** Every event ever written to the stream, deleted ones included. */
  stream(streamId: string): Stored[] {
    return this.log.filter((e) => e.streamId === streamId);
  }

  /** What a read of the stream shows. */
  private visible(streamId: string): Stored[] {
    const from = this.truncatedBefore.get(streamId) ?? 0n;
    return this.stream(streamId).filter((e) => e.revision >= from);
  }

  private write(streamId: string, events: readonly { id: string; type: string; data: unknown; metadata?: unknown }[]): Stored[] {
    const next = BigInt(this.stream(streamId).length);
    const written = events.map((e, k) => {
      const position = BigInt((this.log.length + 1) * 100);
      const stored: Stored = {
        streamId,
        id: e.id,
        revision: next + BigInt(k),
        type: e.type,
        data: e.data,
        metadata: e.metadata,
        created: new Date(),
        position: { commit: position, prepare: position },
      };
      this.log.push(stored);
      return stored;
    });
    for (const subscription of this.subscriptions) subscription.deliver(written);
    return written;
  }

  async appendToStream(streamId: string, events: EventData[], options: { expectedRevision: AppendExpectedRevision }) {
    this.appendCalls.push(events.map((e) => e.id));
    const fault = this.appendFaults.shift();
    if (fault && 'before' in fault) throw fault.before;
    const existing = this.visible(streamId);
    const expected = options.expectedRevision;
    const current = existing.length === 0 ? -1 : Number(existing.at(-1)!.revision);
    if (typeof expected === 'bigint' || expected === 'no_stream') {
      const at = expected === 'no_stream' ? 0n : expected + 1n;
      // The server's idempotent append: the same ids at that revision are a success, not a write.
      const there = existing.find((e) => e.revision === at);
      if (there?.id === events[0]!.id) return { success: true, nextExpectedRevision: at + BigInt(events.length - 1), position: undefined };
      if ((expected === 'no_stream' && current !== -1) || (typeof expected === 'bigint' && Number(expected) !== current)) {
        if (!this.throwOnAppendFailure) return { success: false, nextExpectedRevision: current < 0 ? -1n : BigInt(true), position: undefined };
        throw new WrongExpectedVersionError(undefined, { streamName: streamId, expected, current: current < 0 ? 'no_stream' : BigInt(current) });
      }
    }
    // 'any' is not deduplicated here: the worst case, a server that lost its cache of recent ids.
    const written = this.write(
      streamId,
      events.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
    );
    if (fault && 'after' in fault) throw fault.after;
    const last = written.at(-1)!;
    return { success: true, nextExpectedRevision: last.revision, position: last.position };
  }

  private open(method: Call['method'], options: Record<string, unknown>): Call {
    const call: Call = { method, options, open: true, sent: 0 };
    this.calls.push(call);
    return call;
  }

  readStream(streamId: string, options: { direction?: string; fromRevision?: unknown; maxCount?: number | bigint } = {}, readableOptions?: ReadableOptions) {
    const call = this.open('readStream', { streamId, ...options });
    const events = this.visible(streamId);
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision;
    let items = backwards ? [...events].reverse() : events;
    if (typeof from === 'bigint') items = items.filter((e) => (backwards ? e.revision <= from : e.revision >= from));
    items = items.slice(0, Number(options.maxCount ?? Number.MAX_SAFE_INTEGER));
    const fault = this.readFaults.shift() ?? (events.length === 0 ? { error: new StreamNotFoundError(undefined, streamId) } : undefined);
    return new FakeRead(call, items, fault, readableOptions);
  }

  readAll(options: { fromPosition?: unknown; maxCount?: number | bigint; direction?: string } = {}, readableOptions?: ReadableOptions) {
    const call = this.open('readAll', { ...options });
    const backwards = options.direction === 'backwards';
    const from = typeof options.fromPosition === 'object' ? (options.fromPosition as Position).commit : undefined;
    let items = backwards ? [...this.log].reverse() : this.log;
    if (from !== undefined) items = items.filter((e) => (backwards ? e.position.commit < from : e.position.commit >= from));
    items = items.slice(0, Number(options.maxCount ?? Number.MAX_SAFE_INTEGER));
    return new FakeRead(call, items, this.readFaults.shift(), readableOptions);
  }

  subscribeToAll(options: { fromPosition?: unknown; filter?: unknown } = {}, readableOptions?: ReadableOptions) {
    const call = this.open('subscribeToAll', { ...options });
    const from = typeof options.fromPosition === 'object' ? (options.fromPosition as Position).commit : 0n;
    const backlog = this.log.filter((e) => e.position.commit > from);
    const subscription = new FakeSubscription(call, options.fromPosition, options.filter !== undefined, backlog, readableOptions);
    this.subscriptions.push(subscription);
    return subscription;
  }

  async setStreamMetadata(streamId: string, metadata: unknown) {
    this.metadata.set(streamId, metadata);
    const [written] = this.write(`$$${streamId}`, [{ id: randomUUID(), type: '$metadata', data: metadata }]);
    return { success: true, nextExpectedRevision: written!.revision, position: written!.position };
  }

  /** A soft delete: a `$metadata` write that truncates the stream past its last event. */
  async deleteStream(streamId: string) {
    this.deleteCalls.push(streamId);
    const events = this.visible(streamId);
    if (events.length === 0) throw new StreamNotFoundError(undefined, streamId);
    const truncateBefore = events.at(-1)!.revision + 1n;
    this.truncatedBefore.set(streamId, truncateBefore);
    const [written] = this.write(`$$${streamId}`, [{ id: randomUUID(), type: '$metadata', data: { $tb: Number(truncateBefore) } }]);
    return { position: written!.position };
  }

  async dispose() {
    for (const call of this.openCalls()) call.open = false;
  }
}
