// An EventStore adapter wrapper that fails on command, for what a real store does only on a bad
// day: a subscription whose connection drops or whose stream the server ends, a store that
// refuses new subscriptions, events handed over twice, appends that fail (disk full, read-only).
// It sits where an adapter sits (under resumingStore), so the service's recovery is what is tested.
import { SubscriptionEndedError, type EventStore, type NodeBeat, type RecordedEvent, type SubscribeOptions, type Subscription } from '../../src/store/port.js';

interface Tap {
  options: SubscribeOptions;
  inner: Subscription | undefined;
  cut: boolean;
  last: RecordedEvent | undefined;
}

export class FaultyStore implements EventStore {
  /** While set, every append rejects with it. */
  appendFailure: Error | undefined;
  /** While set, appends to streams it matches are written, then reject with this error (an ambiguous failure). */
  landThenFail: { streams: RegExp; error: Error } | undefined;
  private held: { streams: RegExp; released: Promise<void>; arrived: Array<() => void> } | undefined;
  /** While set, a new subscription fails with it right away. */
  subscribeFailure: Error | undefined;
  /** subscribeToAll calls so far, with the position each asked for. */
  readonly subscribedAfter: number[] = [];
  private readonly taps = new Set<Tap>();
  private readsHeld: Promise<void> | undefined;

  constructor(private readonly inner: EventStore) {}

  /**
   * Appends to streams this matches wait (a process stalled at that step) until the returned
   * release; `arrived` resolves when the first of them is waiting.
   */
  holdAppends(streams: RegExp): { arrived: Promise<void>; release(): void } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    this.held = { streams, released, arrived: [arrived] };
    return {
      arrived: first,
      release: () => {
        this.held = undefined;
        release();
      },
    };
  }

  async append(...args: Parameters<EventStore['append']>) {
    const held = this.held;
    if (held?.streams.test(args[0])) {
      for (const arrived of held.arrived.splice(0)) arrived();
      await held.released;
    }
    if (this.appendFailure) throw this.appendFailure;
    const result = await this.inner.append(...args);
    if (this.landThenFail?.streams.test(args[0])) throw this.landThenFail.error;
    return result;
  }

  readStream(streamName: string) {
    return this.inner.readStream(streamName);
  }

  async readAll(options: { after: number; limit: number }) {
    await this.readsHeld;
    return this.inner.readAll(options);
  }

  /** Reads of the log wait until the returned release (a slow disk, a long log to catch up with). */
  holdReads(): () => void {
    let release!: () => void;
    this.readsHeld = new Promise<void>((resolve) => (release = resolve));
    return release;
  }

  headPosition() {
    return this.inner.headPosition();
  }

  deleteStreams(streamNames: readonly string[]) {
    return this.inner.deleteStreams(streamNames);
  }

  beat(mine: NodeBeat, forget?: readonly string[]) {
    return this.inner.beat(mine, forget);
  }

  close() {
    return this.inner.close();
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    this.subscribedAfter.push(options.after);
    const tap: Tap = { options, inner: undefined, cut: false, last: undefined };
    const refused = this.subscribeFailure;
    if (refused) {
      setImmediate(() => options.onError?.(refused));
      return { unsubscribe: async () => undefined };
    }
    this.taps.add(tap);
    tap.inner = this.inner.subscribeToAll({
      after: options.after,
      onEvent(event) {
        if (tap.cut) return;
        tap.last = event;
        options.onEvent(event);
      },
      onError(error) {
        if (!tap.cut) options.onError?.(error);
      },
    });
    return {
      unsubscribe: async () => {
        this.taps.delete(tap);
        tap.cut = true;
        await tap.inner?.unsubscribe();
      },
    };
  }

  /** Every live subscription stops as a dropped connection does: one error, then nothing. */
  dropSubscriptions(error: Error = new Error('connection reset by peer')): void {
    for (const tap of this.taps) this.stop(tap, error);
  }

  /** Every live subscription's stream ends, as when the server closes it. */
  endSubscriptions(): void {
    this.dropSubscriptions(new SubscriptionEndedError());
  }

  /** Every live subscription hands over its last event once more. */
  repeatLastEvent(): void {
    for (const tap of this.taps) if (tap.last) tap.options.onEvent(tap.last);
  }

  get liveSubscriptions(): number {
    return this.taps.size;
  }

  private stop(tap: Tap, error: Error): void {
    this.taps.delete(tap);
    tap.cut = true;
    void tap.inner?.unsubscribe();
    tap.options.onError?.(error);
  }
}
