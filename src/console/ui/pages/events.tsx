// The event log: filtered by stream, category and type, paged forward by position, or followed
// live as events are appended. Each event says where it came from (its metadata): the request,
// the app and key or the operator, the node, the event that caused it.
import { useEffect, useState } from 'preact/hooks';
import type { EventView, EventsPage } from '../../../contract/console.js';
import { metadataPairs, readEventMetadata } from '../../../system/eventMetadata.js';
import { json, when } from '../format.js';
import { useApi } from '../hooks.js';
import { Failure, Loading } from '../states.js';

interface Filter {
  stream: string;
  category: string;
  type: string;
}

const queryOf = (filter: Filter) =>
  Object.entries(filter)
    .filter(([, value]) => value.trim())
    .map(([name, value]) => `&${name}=${encodeURIComponent(value.trim())}`)
    .join('');

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
              <span class="position">#{event.position}</span> <strong>{event.type}</strong> <code>{event.stream}</code>@{event.revision} <span class="subtle">{when(event.created)}</span>
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
  useEffect(() => {
    const source = new EventSource(`/console/api/events/follow?after=${after}${queryOf(filter)}`);
    source.onopen = () => setState('live');
    source.onerror = () => setState('reconnecting');
    source.addEventListener('event', (message) => setEvents((list) => [JSON.parse((message as MessageEvent).data) as EventView, ...list].slice(0, 500)));
    return () => source.close();
  }, [after, filter]);
  return (
    <>
      <p class="subtle" role="status">
        <span class={`dot dot-${state}`} /> {state === 'live' ? `Following from #${after}: newest first` : `${state}…`}
      </p>
      <EventRows events={events} />
    </>
  );
}

export function EventsPageView() {
  const [draft, setDraft] = useState<Filter>({ stream: '', category: '', type: '' });
  const [filter, setFilter] = useState<Filter>(draft);
  const [cursors, setCursors] = useState<number[]>([0]);
  const [following, setFollowing] = useState<number>();
  const after = cursors.at(-1)!;
  const { data, error, reload } = useApi<EventsPage>(following === undefined ? `/events?after=${after}&limit=50${queryOf(filter)}` : undefined);
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
          setFilter(draft);
          setCursors([0]);
        }}
      >
        {input('category', 'Category', 'apikey, user, operation…')}
        {input('stream', 'Stream', 'user-1630399136785')}
        {input('type', 'Type', 'PointsEditRequested')}
        <button type="submit" class="primary">Filter</button>
        {following === undefined ? (
          <button type="button" disabled={!data} onClick={() => setFollowing(data?.head)}>Follow live</button>
        ) : (
          <button type="button" onClick={() => setFollowing(undefined)}>Stop following</button>
        )}
      </form>
      {following !== undefined ? (
        <Live filter={filter} after={following} />
      ) : !data ? (
        error ? <Failure error={error} retry={reload} /> : <Loading />
      ) : (
        <>
          {error && <Failure error={error} retry={reload} />}
          <p class="subtle">
            After #{after} · the log's head is #{data.head}
          </p>
          <EventRows events={data.items} />
          <nav class="pager" aria-label="Event log pages">
            <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>← Previous</button>
            <button type="button" disabled={cursors.length === 1} onClick={() => setCursors([0])}>Oldest</button>
            <button type="button" disabled={data.next === undefined} onClick={() => setCursors([...cursors, data.next!])}>Next →</button>
          </nav>
        </>
      )}
    </section>
  );
}
