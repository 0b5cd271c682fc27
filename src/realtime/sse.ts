// Server-sent-events framing (spec §6): `id`, `event` and `data` lines, `data` one JSON line.
// JSON.stringify escapes CR and LF inside strings, so a payload can never break a frame.
import type { Frame } from './clientMachine.js';

export function formatFrame(frame: Frame): string {
  if (frame.type === 'heartbeat') return ': heartbeat\n\n';
  return `id: ${frame.id}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}

/** Response headers of the stream (design.md §4): no caching, no proxy buffering. */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/** A Last-Event-ID (header or query) that names a log position, else undefined. */
export function parseLastEventId(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}
