// An SSE client that behaves as a browser's EventSource does: it reconnects by itself after the
// stream ends or fails (a node killed, a proxy that lost its upstream), sending the id of the last
// frame it received as Last-Event-ID, until it is closed. Every frame it received is kept.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FrameData, FrameEvent } from '../support/streamsAndSignIn.js';

/** A frame received, its data typed by its event. */
export type Frame = { [K in FrameEvent]: { id: number | undefined; event: K; data: FrameData[K] } }[FrameEvent];

const RECONNECT_MS = 250;

export class ReconnectingStream {
  readonly frames: Frame[] = [];
  /** Connections opened, the first included. */
  connects = 0;
  private lastId: number | undefined;
  private closed = false;
  private abort: AbortController | undefined;
  private readonly running: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly cookie: string,
  ) {
    this.running = this.run();
  }

  /** The `message` frames' data, in the order received. */
  messages(): Array<FrameData['message']> {
    return this.frames.filter((frame) => frame.event === 'message').map((frame) => frame.data);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort?.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      this.abort = new AbortController();
      try {
        this.connects++;
        const headers: Record<string, string> = { Accept: 'text/event-stream', Cookie: this.cookie };
        if (this.lastId !== undefined) headers['Last-Event-ID'] = String(this.lastId);
        const res = await fetch(`${this.url}/api/realtime`, { headers, signal: this.abort.signal });
        if (res.ok && res.body) await this.read(res.body);
        else await res.body?.cancel();
      } catch {
        // Refused, reset or aborted: reconnect below, as EventSource does.
      }
      if (!this.closed) await sleep(RECONNECT_MS);
    }
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        this.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  }

  private parse(block: string): void {
    let id: number | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = Number(value);
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length === 0) return;
    if (id !== undefined && Number.isFinite(id)) this.lastId = id;
    this.frames.push({ id, event, data: JSON.parse(data.join('\n')) } as Frame);
  }
}
