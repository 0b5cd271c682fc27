// The event log: pages of it by position, filtered by stream, category and type, and the same
// followed live.
import { EventsQuery, type EventsPage } from '../../contract/console.js';
import type { RecordedEvent } from '../../store/port.js';
import { eventView, matches, type EventFilter } from '../eventFilter.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from './consoleRoute.js';

/** A page reads at most this many events of the log, matching or not; `next` goes on from there. */
const SCAN_LIMIT = 20_000;
const READ_PAGE = 2_000;

async function pageOf({ store }: ConsoleDeps, after: number, limit: number, filter: EventFilter): Promise<EventsPage> {
  const items: RecordedEvent[] = [];
  let cursor = after;
  let scanned = 0;
  while (items.length < limit && scanned < SCAN_LIMIT) {
    const read = await store.readAll({ after: cursor, limit: READ_PAGE });
    for (const event of read) {
      cursor = event.position;
      if (matches(event, filter) && items.push(event) === limit) break;
    }
    scanned += read.length;
    if (read.length < READ_PAGE) break;
  }
  const head = await store.headPosition();
  return { items: items.map(eventView), ...(cursor < head && { next: cursor }), head };
}

export const eventEndpoints = [
  consoleRoute({
    method: 'get',
    path: '/console/api/events',
    query: EventsQuery,
    handle: (_ctx, { query: { after, limit, ...filter } }, deps) => pageOf(deps, after, limit, filter),
  }),
  consoleRoute({
    method: 'get',
    path: '/console/api/events/follow',
    query: EventsQuery,
    handle(ctx, { query: { after, limit: _, ...filter } }, { follows }) {
      // A reconnecting EventSource says where it got to.
      const lastEventId = Number(ctx.get('Last-Event-ID'));
      follows.follow(ctx, Number.isSafeInteger(lastEventId) && lastEventId > after ? lastEventId : after, filter);
    },
  }),
];
