// Subscriptions that survive their store: around any adapter, resumingStore turns a subscription
// that stops at the first failure or end of stream into one that resumes from the last delivered
// position, after a backoff, until it is unsubscribed. It also asserts that positions go up and
// keeps a throwing handler from stopping delivery (the semantics are stated in port.ts).
import { EventHandlerError, OutOfOrderEventError, SubscriptionInterruptedError, type EventStore, type SubscribeOptions, type Subscription } from './port.js';

export interface ResumeBackoff {
  /** Wait before the first resume after an interruption. */
  firstDelayMs: number;
  /** The wait doubles with each interruption in a row, up to this. */
  maxDelayMs: number;
}

export const DEFAULT_RESUME_BACKOFF: ResumeBackoff = { firstDelayMs: 100, maxDelayMs: 5000 };

export function resumeDelay(attempt: number, backoff: ResumeBackoff): number {
  return Math.min(backoff.maxDelayMs, backoff.firstDelayMs * 2 ** (attempt - 1));
}

export function resumingStore(inner: EventStore, backoff: ResumeBackoff = DEFAULT_RESUME_BACKOFF): EventStore {
  const live = new Set<Subscription>();
  return {
    append: (streamName, events, options) => inner.append(streamName, events, options),
    readStream: (streamName) => inner.readStream(streamName),
    readAll: (options) => inner.readAll(options),
    headPosition: () => inner.headPosition(),
    deleteStreams: (streamNames) => inner.deleteStreams(streamNames),
    beat: (mine, forget) => inner.beat(mine, forget),
    ...(inner.heldBackMs && { heldBackMs: () => inner.heldBackMs!() }),
    subscribeToAll(options) {
      const subscription = resumingSubscription(inner, options, backoff, () => live.delete(subscription));
      live.add(subscription);
      return subscription;
    },
    async close() {
      // A resume waiting for its timer would otherwise subscribe to a closed store.
      await Promise.all([...live].map((s) => s.unsubscribe()));
      await inner.close();
    },
  };
}

function resumingSubscription(inner: EventStore, options: SubscribeOptions, backoff: ResumeBackoff, forget: () => void): Subscription {
  let lastDelivered = options.after;
  let attempt = 0;
  let current: Subscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // Each inner subscription gets a generation; anything an older one still reports is ignored.
  let generation = 0;

  const open = () => {
    const mine = ++generation;
    const isCurrent = () => !closed && mine === generation;
    try {
      const subscription = inner.subscribeToAll({
        after: lastDelivered,
        onEvent(event) {
          if (!isCurrent()) return;
          if (event.position <= lastDelivered) return interrupt(new OutOfOrderEventError(event.position, lastDelivered));
          lastDelivered = event.position;
          attempt = 0;
          try {
            options.onEvent(event);
          } catch (error) {
            options.onError?.(new EventHandlerError(event, error as Error));
          }
        },
        onError(error) {
          if (isCurrent()) interrupt(error);
        },
      });
      // An inner subscription may fail before it is even returned.
      if (isCurrent()) current = subscription;
      else void subscription.unsubscribe().catch(() => undefined);
    } catch (error) {
      interrupt(error as Error);
    }
  };

  const interrupt = (cause: Error) => {
    generation += 1;
    const dropped = current;
    current = undefined;
    void dropped?.unsubscribe().catch(() => undefined);
    attempt += 1;
    const delayMs = resumeDelay(attempt, backoff);
    options.onError?.(new SubscriptionInterruptedError(cause, lastDelivered, attempt, delayMs));
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) open();
    }, delayMs);
  };

  open();
  return {
    async unsubscribe() {
      if (closed) return;
      closed = true;
      generation += 1;
      clearTimeout(timer);
      forget();
      await current?.unsubscribe();
    },
  };
}
