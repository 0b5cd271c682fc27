// Server-sent-event answers the console holds open: live follows of the event log and, in
// development, the reload stream. Like realtime streams, each takes a slot per client address and
// per node (a refusal is 429 or 503 with Retry-After), so that they cannot use up the node's
// sockets. Each carries a heartbeat, keeps at most `maxBufferedBytes` for a reader that does not
// read, and ends at the first of: the page leaving, its session ending (sessionWatch.ts), its
// lifetime when it has one, the service stopping.
import { PassThrough } from 'node:stream';
import type { ParameterizedContext } from 'koa';
import { ADMISSION_RETRY_AFTER_SECONDS, ConnectionAdmission } from '../realtime/admission.js';
import { clientGroup, type ClientAddressing } from '../http/clientAddress.js';
import type { OperatorState } from './guards.js';
import type { SessionWatch } from './sessionWatch.js';

export interface ConsoleStreamLimits {
  /** Streams one client address may hold on this node (429 past it). */
  perAddress: number;
  /** Streams this node holds for the console in all (503 past it). */
  perNode: number;
  /** Longest a stream stays silent: a comment frame then (and the session is checked). */
  heartbeatMs: number;
  /** Bytes written and not yet taken by the reader: past this the stream is cut off. */
  maxBufferedBytes: number;
}

export const CONSOLE_STREAM_LIMITS: ConsoleStreamLimits = { perAddress: 8, perNode: 32, heartbeatMs: 15_000, maxBufferedBytes: 1024 * 1024 };

export interface ConsoleStream {
  /** Sends a frame if the session still holds (else the stream ends); false once it has ended. */
  send(frame: string): boolean;
  /** Runs `cleanup` when the stream ends, whatever ends it (at once if it has). */
  onEnd(cleanup: () => void): void;
  end(): void;
}

export class ConsoleStreams {
  private readonly open = new Set<() => void>();
  private readonly admission: ConnectionAdmission;
  private closed = false;

  constructor(
    private readonly watch: SessionWatch,
    private readonly limits: ConsoleStreamLimits = CONSOLE_STREAM_LIMITS,
    private readonly addressing: ClientAddressing = { trustProxy: false, ipv6PrefixLength: 64 },
  ) {
    this.admission = new ConnectionAdmission({ perAddress: limits.perAddress, total: limits.perNode });
  }

  /**
   * Answers `ctx` (a request of a signed-in operator) with an event stream that begins with the
   * comment `greeting`; undefined when refused (the refusal is answered). `lifetimeMs`: ends it
   * then, for a client that reconnects by itself.
   */
  start(ctx: ParameterizedContext<OperatorState>, greeting: string, lifetimeMs?: number): ConsoleStream | undefined {
    const address = clientGroup(ctx.req, this.addressing);
    if (this.closed) return refuse(ctx, 503, 'The service is shutting down; reconnect in a moment');
    const refusal = this.admission.admit(address);
    if (refusal?.status === 503) return refuse(ctx, 503, `This node holds its maximum of ${this.limits.perNode} console streams; retry in a moment`);
    if (refusal) return refuse(ctx, 429, `Too many console streams from this address (at most ${this.limits.perAddress})`);

    const body = new PassThrough();
    const cleanups: Array<() => void> = [];
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.open.delete(end);
      this.admission.release(address);
      clearInterval(heartbeat);
      clearTimeout(lifetime);
      watched.stop();
      for (const cleanup of cleanups) cleanup();
      body.end();
    };
    const watched = this.watch.watch(ctx.state.operator, end);
    const send = (frame: string) => {
      if (ended || !watched.live()) return false;
      body.write(frame);
      if (body.writableLength + body.readableLength + ctx.res.writableLength > this.limits.maxBufferedBytes) {
        // A reader this far behind is cut off; it reconnects (a follow with Last-Event-ID).
        end();
        ctx.res.destroy();
        return false;
      }
      return true;
    };
    // The socket holds the process while the stream is open; the timers need not.
    const heartbeat = setInterval(() => send(': heartbeat\n\n'), this.limits.heartbeatMs).unref();
    const lifetime = lifetimeMs === undefined ? undefined : setTimeout(end, lifetimeMs).unref();
    this.open.add(end);
    ctx.res.once('close', end);

    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
    body.write(greeting);
    return {
      send,
      end,
      onEnd(cleanup) {
        if (ended) cleanup();
        else cleanups.push(cleanup);
      },
    };
  }

  /** Ends every open stream and refuses new ones (the service is stopping). */
  close(): void {
    this.closed = true;
    for (const end of [...this.open]) end();
  }
}

function refuse(ctx: ParameterizedContext, status: 429 | 503, message: string): undefined {
  ctx.status = status;
  ctx.set('Retry-After', String(ADMISSION_RETRY_AFTER_SECONDS));
  ctx.body = { code: status, message, data: {} };
  return undefined;
}
