// Sends one webhook attempt and says how it went. One undici Agent for every endpoint: keep-alive
// per origin, each connection's addresses checked (webhookAddresses.ts), no redirect ever followed
// (an Agent's request() does not follow them: a 3xx is a failed attempt), one deadline for the
// whole attempt, and at most RESPONSE_KEPT bytes of the answer read.
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { guardedLookup, refusedHostProblem } from './webhookAddresses.js';

/** Bytes of a receiver's answer kept with the attempt (the rest is not read). */
export const RESPONSE_KEPT = 1024;

export interface AttemptResult {
  delivered: boolean;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why it failed without an answer, or what a redirect pointed to. */
  error?: string;
  /** The first RESPONSE_KEPT bytes of the answer's body (as UTF-8 text). */
  response?: string;
  durationMs: number;
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  /** Private, loopback and link-local addresses may be reached (WEBHOOKS_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  userAgent: string;
}

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: WebhookSenderOptions) {
    this.agent = new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: options.timeoutMs, ...(!options.allowPrivate && { lookup: guardedLookup }) },
    });
  }

  /** Never rejects: every failure is an attempt that did not deliver. `stop` aborts it (shutdown). */
  async send(url: string, headers: Record<string, string>, body: string, stop: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const target = new URL(url);
    // An address in the URL itself is never looked up: it is checked here (a name, at each connection).
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    const problem = !this.options.allowPrivate && isIP(literal) !== 0 ? refusedHostProblem(target.hostname) : undefined;
    if (problem) return { delivered: false, error: `not sent: the host ${problem}`, durationMs: 0 };
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const answer = await request(target, {
        dispatcher: this.agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': this.options.userAgent, ...headers },
        body,
        signal: AbortSignal.any([stop, deadline]),
      });
      const response = await firstBytes(answer.body);
      const status = answer.statusCode;
      const delivered = status >= 200 && status < 300;
      const location = answer.headers.location;
      const error = status >= 300 && status < 400 ? `redirect${location ? ` to ${String(location).slice(0, 200)}` : ''} not followed` : undefined;
      return { delivered, status, ...(error && { error }), ...(response && { response }), durationMs: took() };
    } catch (cause) {
      return { delivered: false, error: describe(cause, deadline.aborted, this.options.timeoutMs), durationMs: took() };
    }
  }

  close(): Promise<void> {
    return this.agent.destroy();
  }
}

/** Reads at most RESPONSE_KEPT bytes of a body and drops the rest (the connection with it, if it is long). */
async function firstBytes(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_KEPT) break;
    }
  } catch {
    // An answer cut short still counts by its status.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_KEPT).toString('utf8');
}

function describe(cause: unknown, timedOut: boolean, timeoutMs: number): string {
  const error = cause as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (timedOut || error.code === 'UND_ERR_HEADERS_TIMEOUT' || error.code === 'UND_ERR_BODY_TIMEOUT' || error.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `timed out after ${timeoutMs} ms`;
  }
  const inner = error.code === 'WEBHOOK_ADDRESS_REFUSED' || !error.cause ? error : error.cause;
  if (inner.code === 'WEBHOOK_ADDRESS_REFUSED') return `not sent: ${inner.message}`;
  return [inner.code, inner.message].filter(Boolean).join(': ') || String(cause);
}
