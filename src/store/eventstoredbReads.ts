// Streaming reads of the EventStoreDB client (6.x), ended on every path. Each read is a gRPC call
// the client opens with no deadline. Leaving a `for await` early only destroys the client's side
// of the stream: the call itself stays open on the server until it is cancelled. A call read to
// its end is over; cancelling one that has ended does nothing.
import type { StreamingRead } from '@eventstore/db-client';

/** The items of a streaming read; unless it was read to its end, its call is cancelled. */
export async function* untilEnded<E>(read: StreamingRead<E>): AsyncGenerator<E, void, undefined> {
  // Failures come through the iteration. This listener keeps one the client emits after the
  // iteration has stopped (a server error racing the cancel) from being thrown unhandled.
  read.on('error', () => undefined);
  let ended = false;
  try {
    for await (const item of read) yield item as E;
    ended = true;
  } finally {
    // cancel() rejects only for a call that never started: there is nothing to end then.
    if (!ended) await read.cancel().catch(() => undefined);
  }
}
