// An EventStore adapter wrapper that fails on command, for what a real store does only on a bad
// day: a subscription whose connection drops or whose stream the server ends, a store that
// refuses new subscriptions, events handed over twice, appends that fail (disk full, read-only).
// It sits where an adapter sits (under resumingStore), so the service's recovery is what is tested.
import { SubscriptionEndedError, type EventStore, type RecordedEvent, type SubscribeOptions, type Subscription } from '../../src/store/port.js';

interface Tap {
  options: SubscribeOptions;
  inner: Subscription | undefined;
  cut: boolean;
  last: RecordedEvent | undefined;
}

export class FaultyStore implements EventStore {
  /** While set, every append rejects with it. */
  appendFailure: Error | undefined;
  /** While set, a new subscription fails with it right away. */
  subscribeFailure: Error | undefined;
  /** subscribeToAll calls so far, with the position each asked for. */
  readonly subscribedAfter: number[] = [];
  private readonly taps = new Set<Tap>();
  private readsHeld: Promise<void> | undefined;

  constructor(private readonly inner: EventStore) {}

  append(...args: Parameters<EventStore['append']>) {
    return this.appendFailure ? Promise.reject(this.appendFailure) : this.inner.append(...args);
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
