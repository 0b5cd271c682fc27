// A subscription of the EventStoreDB client (6.x) read with backpressure: one event at a time,
// pulled by async iteration, never in flowing mode. While the subscriber is busy the client's
// stream fills up to its buffer and stops asking gRPC for more, and gRPC's flow control then
// holds the server back: events wait on the server, not in this process.
import type { ReadableSubscription } from '@eventstore/db-client';
import { SubscriptionEndedError } from './port.js';

/**
 * Events the client's stream holds read ahead of the subscriber, on each of its two sides (the
 * messages from gRPC, and the events made of them), passed to the client as `highWaterMark`.
 */
export const SUBSCRIPTION_BUFFER = 32;

export interface Following {
  /** Cancels the call; nothing is delivered or reported afterwards. */
  stop(): Promise<void>;
}

/**
 * Hands the subscription's events to `onEvent` one at a time until `stop()`, or until the first
 * failure or end of the server's stream (onEvent throwing included), which `onStopped` is told
 * of, once (an end as SubscriptionEndedError).
 */
export function follow<E>(subscription: ReadableSubscription<E>, onEvent: (event: E) => void, onStopped: (error: Error) => void): Following {
  let stopped = false;
  // Failures come through the iteration. This listener keeps one the client emits after it has
  // stopped (a server error racing the cancel) from being thrown unhandled.
  subscription.on('error', () => undefined);
  const end = async () => {
    // Cancelling ends the call on the server; destroying the stream ends a wait for the next
    // event at once. unsubscribe() rejects only for a call that never started.
    await subscription.unsubscribe().catch(() => undefined);
    subscription.destroy();
  };
  void (async () => {
    try {
      for await (const event of subscription) {
        if (stopped) return;
        onEvent(event as E);
      }
      throw new SubscriptionEndedError();
    } catch (error) {
      if (stopped) return;
      stopped = true;
      void end();
      onStopped(error as Error);
    }
  })();
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      await end();
    },
  };
}
