// The event log: filtered by stream, category and type, paged forward by position, or followed
// live as events are appended. Each event says where it came from (its metadata): the request,
// the app and key or the operator, the node, the event that caused it. The filter lives in the
// page's address (#/events?category=…), so a reload or a shared link shows the same events.
import { useEffect, useState } from 'preact/hooks';
import type { EventView, EventsPage } from '../../../contract/console.js';
import { metadataPairs, readEventMetadata } from '../../../system/eventMetadata.js';
import { json, when } from '../format.js';
import { useApi } from '../hooks.js';
import { Failure, Loading } from '../states.js';

export interface Filter {
  stream: string;
  category: string;
  type: string;
}

const FILTER_NAMES = ['category', 'stream', 'type'] as const;

/** The filter a page address's query names; what it leaves out matches everything. */
export const filterOf = (query: URLSearchParams): Filter => ({ category: query.get('category') ?? '', stream: query.get('stream') ?? '', type: query.get('type') ?? '' });

/** The filter's given parts as a query: `category=apikey&type=ApiKeyIssued`. */
function queryOf(filter: Filter): string {
  const query = new URLSearchParams();
  for (const name of FILTER_NAMES) if (filter[name].trim()) query.set(name, filter[name].trim());
  return query.toString();
}

const andQueryOf = (filter: Filter) => (queryOf(filter) ? `&${queryOf(filter)}` : '');

/** `request trace-123 · app game-one · key k1 · node a`; nothing for an event without metadata. */
function Origin({ event }: { event: EventView }) {
  const pairs = metadataPairs(readEventMetadata(event.metadata));
  if (pairs.length === 0) return null;
  return <span class="subtle"> · {pairs.map(([name, value]) => `${name} ${value}`).join(' · ')}</span>;
}

function EventRows({ events }: { events: EventView[] }) {
  if (events.length === 0) return <p class="empty">No matching event here.</p>;
  return (
    <ol class="events">
      {events.map((event) => (
        <li key={event.position}>
          <details>
            <summary>
              <span class="position">#{event.position}</span> <strong>{event.type}</strong>{' '}
              <code class="name" title={event.stream}>
                {event.stream}
              </code>
              @{event.revision} <span class="subtle">{when(event.created)}</span>
              <Origin event={event} />
            </summary>
            <pre>{json({ data: event.data, ...(event.metadata && { metadata: event.metadata }) })}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}

function Live({ filter, after }: { filter: Filter; after: number }) {
  const [events, setEvents] = useState<EventView[]>([]);
  const [state, setState] = useState('connecting');
  const query = andQueryOf(filter);
  useEffect(() => {
    const source = new EventSource(`/console/api/events/follow?after=${after}${query}`);
    source.onopen = () => setState('live');
    source.onerror = () => setState('reconnecting');
    source.addEventListener('event', (message) => setEvents((list) => [JSON.parse((message as MessageEvent).data) as EventView, ...list].slice(0, 500)));
    return () => source.close();
  }, [after, query]);
  return (
    <>
      <p class="subtle" role="status">
        <span class={`dot dot-${state}`} /> {state === 'live' ? `Following from #${after}: newest first` : `${state}…`}
      </p>
      <EventRows events={events} />
    </>
  );
}

/** `filter`: the one the page's address names; a new filter is a new address. */
export function EventsPageView({ filter }: { filter: Filter }) {
  const [draft, setDraft] = useState<Filter>(filter);
  const [cursors, setCursors] = useState<number[]>([0]);
  const [following, setFollowing] = useState<number>();
  const after = cursors.at(-1)!;
  const { data, error, reload } = useApi<EventsPage>(following === undefined ? `/events?after=${after}&limit=50${andQueryOf(filter)}` : undefined);
  const input = (name: keyof Filter, label: string, placeholder: string) => (
    <label>
      {label}
      <input name={name} value={draft[name]} placeholder={placeholder} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })} />
    </label>
  );
  return (
    <section>
      <h1>Event log</h1>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          const query = queryOf(draft);
          location.hash = query ? `#/events?${query}` : '#/events';
        }}
      >
        {input('category', 'Category', 'apikey, user, operation…')}
        {input('stream', 'Stream', 'user-1630399136785')}
        {input('type', 'Type', 'PointsEditRequested')}
        <button type="submit" class="primary">
          Filter
        </button>
        {following === undefined ? (
          <button type="button" disabled={!data} onClick={() => setFollowing(data?.head)}>
            Follow live
          </button>
        ) : (
          <button type="button" onClick={() => setFollowing(undefined)}>
            Stop following
          </button>
        )}
      </form>
      {following !== undefined ? (
        <Live filter={filter} after={following} />
      ) : !data ? (
        error ? (
          <Failure error={error} retry={reload} />
        ) : (
          <Loading />
        )
      ) : (
        <>
          {error && <Failure error={error} retry={reload} />}
          <p class="subtle">
            After #{after} · the log's head is #{data.head}
          </p>
          <EventRows events={data.items} />
          <nav class="pager" aria-label="Event log pages">
            <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
              ← Previous
            </button>
            <button type="button" disabled={cursors.length === 1} onClick={() => setCursors([0])}>
              Oldest
            </button>
            <button type="button" disabled={data.next === undefined} onClick={() => setCursors([...cursors, data.next!])}>
              Next →
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
