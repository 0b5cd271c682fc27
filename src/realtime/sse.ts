// Server-sent-events framing (the stream's form: docs/api.md): `id`, `event` and `data` lines,
// `data` one JSON line. JSON.stringify escapes CR and LF inside strings, so a payload can never
// break a frame. Also what the hub needs of the response under a stream, and its buffer bound.
import type { Frame } from './clientActor.js';

/**
 * Live frames a reader has not taken, in bytes: past this it is cut off, and reconnects with
 * Last-Event-ID to catch up. A replay paces its own writes and is never cut off by it; the live
 * frames held behind a replay count against it (replay.ts).
 */
export const SLOW_READER_MAX_BYTES = 1024 * 1024;

/** The response under a connection's frames, as far as pacing and the bound need it: a ServerResponse. */
export interface FrameStream {
  /** Bytes written and not yet taken by the socket. */
  readonly writableLength: number;
  /** A write found the buffer over its high-water mark: write more after 'drain'. */
  readonly writableNeedDrain: boolean;
  readonly destroyed: boolean;
  once(event: 'drain', listener: () => void): unknown;
  destroy(): unknown;
}

/**
 * The last message frame formatted. One push reaches every connection of its users one after
 * another, each machine or actor emitting the same id, app, name and data object: those are serialised once
 * per push instead of once per connection.
 */
let lastMessage: { id: number; appId: string; name: string; data: object; text: string } | undefined;

export function formatFrame(frame: Frame): string {
  if (frame.type === 'heartbeat') return ': heartbeat\n\n';
  if (frame.type === 'message') {
    const { app_id: appId, name, data } = frame.data;
    const last = lastMessage;
    if (last && last.id === frame.id && last.data === data && last.appId === appId && last.name === name) return last.text;
    const text = `id: ${frame.id}\nevent: message\ndata: ${JSON.stringify(frame.data)}\n\n`;
    lastMessage = { id: frame.id, appId, name, data, text };
    return text;
  }
  return `id: ${frame.id}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}

/** Response headers of the stream: no caching, no proxy buffering. */
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
