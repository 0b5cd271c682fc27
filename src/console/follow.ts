// Live streams of the event log for console pages (SSE): each its own store subscription from the
// position the page asks for (catch-up, then live, no gaps), held as a console stream (streams.ts:
// capped, and ended with its session, when the page goes or when the service stops).
import type { ParameterizedContext } from 'koa';
import type { EventStore } from '../store/port.js';
import { eventView, matches, type EventFilter } from './eventFilter.js';
import { consoleSessionStream } from './events.js';
import type { OperatorState } from './guards.js';
import type { ConsoleStreams } from './streams.js';

export class EventFollows {
  constructor(private readonly deps: { store: EventStore; streams: ConsoleStreams }) {}

  /** Answers `ctx` with the events after `after` that match, as they are appended. */
  follow(ctx: ParameterizedContext<OperatorState>, after: number, filter: EventFilter): void {
    const stream = this.deps.streams.start(ctx, ': following\n\n');
    if (!stream) return;
    const ownSession = consoleSessionStream(ctx.state.operator.sessionId);
    const subscription = this.deps.store.subscribeToAll({
      after,
      onEvent: (event) => {
        // The log says this session ended: a logout on another node, seen as soon as it is read.
        if (event.streamName === ownSession && event.type === 'ConsoleSessionEnded') return stream.end();
        if (matches(event, filter)) stream.send(`id: ${event.position}\nevent: event\ndata: ${JSON.stringify(eventView(event))}\n\n`);
      },
    });
    // The page is gone either way: a failed unsubscribe has nobody to tell.
    stream.onEnd(() => void subscription.unsubscribe().catch(() => undefined));
  }
}
