// `GET /api/realtime` answered by the request listener itself, after its connect gate and before
// koa. A stream is held for hours, and whatever its request made stays with its request and
// response objects that long: koa's middlewares set each header on the response (a header map
// Node keeps after sending it), and reading the path or a header through koa parses and keeps
// the URL and a header object. Here the request's headers are read from its raw list, the
// answer's headers are collected in one object and sent at once, and nothing is parsed to be
// kept. It does for this route what the middlewares do for every route (requestLog.ts,
// errors.ts, noSniff, cors.ts): the request id and its context, the log line and metrics sample,
// nosniff, CORS, and errors in the `{code, message, data}` form (rendered on a koa context: a
// failure is rare, the stream is not).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { ErrorAnswer } from '../contract/answers.js';
import type { Logger } from '../log.js';
import { WorkContext } from '../system/workContext.js';
import { openStream, STREAM_PATH, type StreamExchange } from './api/realtime.js';
import type { HttpDeps } from './deps.js';
import { allowOriginHeaders } from './middleware/cors.js';
import type { RenderError } from './middleware/errors.js';
import { recordRequest, requestIdOf } from './middleware/requestLog.js';
import { SSE_HEADERS } from '../realtime/sse.js';

/** A request header by its lower-case name, repeated ones joined as Node joins them; '' when absent. */
export function rawHeader(req: IncomingMessage, name: string): string {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length !== name.length || raw[i]!.toLowerCase() !== name) continue;
    value = value === undefined ? raw[i + 1]! : `${value}${name === 'cookie' ? '; ' : ', '}${raw[i + 1]!}`;
  }
  return value ?? '';
}

/** The `lastEventId` query parameter when it is given once (koa's query would make an array of more). */
function queryParameter(url: string | undefined, name: string): string | undefined {
  const at = url?.indexOf('?') ?? -1;
  if (at < 0) return undefined;
  const values = new URLSearchParams(url!.slice(at + 1)).getAll(name);
  return values.length === 1 ? values[0] : undefined;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** One exchange: the answer's headers, collected until they are sent at once. */
class RawExchange implements StreamExchange {
  status = 404;
  readonly headers: Record<string, string | string[]>;
  private cookies: string[] | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    requestId: string,
    allowed: ReadonlySet<string>,
  ) {
    this.headers = { 'X-Request-Id': requestId, 'X-Content-Type-Options': 'nosniff', Vary: 'Origin', ...allowOriginHeaders(allowed, this.header('origin')) };
  }

  header(name: string): string {
    return rawHeader(this.req, name);
  }

  queryLastEventId(): unknown {
    return queryParameter(this.req.url, 'lastEventId');
  }

  setCookie(value: string): void {
    if (this.cookies) this.cookies.push(value);
    else this.cookies = [value];
  }

  refuse({ status, data }: ErrorAnswer, message: string): void {
    const retry: Record<string, string> = 'retryAfterSeconds' in data && data.retryAfterSeconds !== undefined ? { 'Retry-After': String(data.retryAfterSeconds) } : {};
    this.answer(status, retry, JSON.stringify({ code: status, message, data }));
  }

  writeHead(): void {
    this.status = 200;
    this.res.writeHead(200, { ...this.collected(), ...SSE_HEADERS });
  }

  /** A JSON answer with the collected headers. */
  answer(status: number, headers: Record<string, string>, body: string): void {
    this.status = status;
    if (this.res.destroyed) return;
    this.res.writeHead(status, { ...this.collected(), ...headers, 'Content-Type': JSON_TYPE, 'Content-Length': String(Buffer.byteLength(body)) });
    this.res.end(body);
  }

  private collected(): Record<string, string | string[]> {
    return this.cookies ? { ...this.headers, 'Set-Cookie': this.cookies } : this.headers;
  }
}

export interface RealtimeStreamOptions {
  deps: Pick<HttpDeps, 'realtime' | 'addressing' | 'metrics' | 'nodeId'>;
  log: Logger;
  /** The koa application whose context renders a failure, as errors.ts does for every route. */
  app: Koa;
  renderError: RenderError;
}

/** Answers `GET /api/realtime` (the caller checked the method and path). */
export function realtimeStream({ deps, log, app, renderError }: RealtimeStreamOptions) {
  const allowed = new Set(deps.realtime.corsOrigins);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const requestId = requestIdOf(rawHeader(req, 'x-request-id'));
    const exchange = new RawExchange(req, res, requestId, allowed);
    const done = () => recordRequest(log, deps.metrics, { requestId, appId: undefined, labels: { method: 'GET', route: STREAM_PATH, status: String(exchange.status) }, started });
    // The events recorded for the client carry the request's id.
    openStream(req, res, exchange, WorkContext.ofRequest(requestId, deps.nodeId), deps).then(done, (error: unknown) => {
      fail(exchange, req, res, error);
      done();
    });
  };

  function fail(exchange: RawExchange, req: IncomingMessage, res: ServerResponse, error: unknown): void {
    if (res.headersSent) {
      exchange.status = 500;
      res.destroy();
      return;
    }
    // The headers the renderer sets (Retry-After) go on the response, and join the collected ones.
    const ctx = app.createContext(req, res);
    renderError(ctx, error);
    exchange.answer(ctx.status, {}, JSON.stringify(ctx.body));
  }
}
