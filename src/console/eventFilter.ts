// Which events of the log an operator asked to see: one stream, a category of streams, a type.
import type { EventView, EventsQuery } from '../contract/console.js';
import type { RecordedEvent } from '../store/port.js';

export type EventFilter = Pick<EventsQuery, 'stream' | 'category' | 'type'>;

export function matches(event: RecordedEvent, { stream, category, type }: EventFilter): boolean {
  if (stream && event.streamName !== stream) return false;
  if (category && !event.streamName.startsWith(`${category}-`)) return false;
  return !type || event.type === type;
}

export function eventView({ position, streamName, revision, type, data, metadata, created }: RecordedEvent): EventView {
  return { position, stream: streamName, revision, type, data, ...(metadata !== undefined && { metadata }), created };
}
