// `events [--stream <name>] [--json]`: the log, oldest first. `--json` prints NDJSON, one event
// per line, its metadata included; otherwise one readable line per event, with where it came from
// (request, app and key or operator, node, cause) before its data. The log is read a page at a
// time and written as it is read, so a log of any size replays in constant memory.
import { toSpecTimestamp } from '../domain/time.js';
import type { EventStore, RecordedEvent } from '../store/port.js';
import { metadataPairs, readEventMetadata } from '../system/eventMetadata.js';
import { escapeControl } from './table.js';

/** Writes text and resolves once the output can take more (backpressure on a slow pipe). */
export type Write = (text: string) => Promise<void>;

const PAGE = 1000;
const MAX_DATA = 200;

export function eventJson(event: RecordedEvent) {
  const { position, streamName: stream, revision, type, data, metadata, created } = event;
  return { position, stream, revision, type, data, metadata: metadata ?? null, created };
}

/** `request=trace-123 app=game-one key=k1 node=a  `; nothing for an event without metadata. */
function originOf(event: RecordedEvent): string {
  const pairs = metadataPairs(readEventMetadata(event.metadata));
  return pairs.length === 0 ? '' : `${pairs.map(([name, value]) => `${name}=${value}`).join(' ')}  `;
}

function eventLine(event: RecordedEvent): string {
  const data = JSON.stringify(event.data);
  const shown = data.length > MAX_DATA ? `${data.slice(0, MAX_DATA - 1)}…` : data;
  return escapeControl(`#${event.position}  ${toSpecTimestamp(event.created)}  ${event.streamName}@${event.revision}  ${event.type}  ${originOf(event)}${shown}`);
}

/**
 * `<category>-<id>` names one stream; a name without `-` (`user`, `vip`, `operation`, …) names a
 * category: every stream `<name>-…`.
 */
function streamFilter(name: string): (event: RecordedEvent) => boolean {
  return name.includes('-') ? (e) => e.streamName === name : (e) => e.streamName.startsWith(`${name}-`);
}

/** Every event (of the stream or category, when given), oldest first. */
async function* replay(store: EventStore, stream: string | undefined): AsyncGenerator<RecordedEvent[]> {
  if (stream?.includes('-')) {
    // One stream is small (a user, a VIP record set, one operation): read it whole.
    yield await store.readStream(stream);
    return;
  }
  const keep = stream ? streamFilter(stream) : () => true;
  for (let after = 0; ; ) {
    const page = await store.readAll({ after, limit: PAGE });
    if (page.length === 0) return;
    yield page.filter(keep);
    after = page.at(-1)!.position;
    if (page.length < PAGE) return;
  }
}

export async function eventsCommand(store: EventStore, options: { stream?: string; json?: boolean }, write: Write): Promise<number> {
  let count = 0;
  for await (const events of replay(store, options.stream?.trim() || undefined)) {
    if (events.length === 0) continue;
    count += events.length;
    const lines = events.map((event) => (options.json ? JSON.stringify(eventJson(event)) : eventLine(event)));
    await write(`${lines.join('\n')}\n`);
  }
  if (count === 0 && !options.json) await write(options.stream ? `No events in ${options.stream}.\n` : 'The log is empty.\n');
  return count;
}
