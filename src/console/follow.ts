// Live streams of the event log for console pages (SSE): each its own store subscription from the
// position the page asks for (catch-up, then live, no gaps), ended when the page goes or the
// service stops.
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { EventStore } from '../store/port.js';
import { eventView, matches, type EventFilter } from './eventFilter.js';

const HEARTBEAT_MS = 15_000;

export class EventFollows {
  private readonly open = new Set<() => void>();

  constructor(private readonly store: EventStore) {}

  /** Answers `ctx` with the events after `after` that match, as they are appended. */
  follow(ctx: Context, after: number, filter: EventFilter): void {
    const body = new PassThrough();
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
    body.write(': following\n\n');
    const subscription = this.store.subscribeToAll({
      after,
      onEvent: (event) => {
        if (matches(event, filter)) body.write(`id: ${event.position}\nevent: event\ndata: ${JSON.stringify(eventView(event))}\n\n`);
      },
    });
    const heartbeat = setInterval(() => body.write(': heartbeat\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    const end = () => {
      if (!this.open.delete(end)) return;
      clearInterval(heartbeat);
      void subscription.unsubscribe();
      body.end();
    };
    this.open.add(end);
    ctx.req.once('close', end);
  }

  /** Ends every open stream (the service is stopping). */
  close(): void {
    for (const end of [...this.open]) end();
  }
}
