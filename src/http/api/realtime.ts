// The realtime stream, and logout (docs/api.md). The stream's frames come only from the client's
// machine, which the hub hands over; this handler just writes them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Observer } from 'rxjs';
import { ErrorBody, SuccessBody, type ErrorAnswer } from '../../contract/answers.js';
import type { Logger } from '../../log.js';
import type { Frame } from '../../realtime/clientActor.js';
import { ADMISSION_RETRY_AFTER_SECONDS } from '../../realtime/admission.js';
import { hashBinding, newBinding } from '../../realtime/browserCookies.js';
import { type ClientHandle, HubClosedError } from '../../realtime/hub.js';
import { formatFrame, parseLastEventId, SSE_HEADERS } from '../../realtime/sse.js';
import { clientGroup } from '../clientAddress.js';
import type { WorkContext } from '../../system/workContext.js';
import type { HttpDeps } from '../deps.js';
import { route, type ApiSettings, type RouteContext } from '../route.js';

export const STREAM_PATH = '/api/realtime';

/** Whether a request URL is the stream's path exactly, as the router matches it, a query or not. */
export const isRealtimeStreamUrl = (url: string | undefined) => url === STREAM_PATH || (url?.startsWith(`${STREAM_PATH}?`) ?? false);

/** The page origin that opened the stream, when the header holds one (the login page may show it). */
function pageOrigin(header: string): { origin?: string } {
  // Checked before parsing: most streams send no Origin, and a throwing parse costs a stack trace.
  if (header.length > 200 || !URL.canParse(header)) return {};
  const url = new URL(header);
  return ['http:', 'https:'].includes(url.protocol) && url.origin === header ? { origin: header } : {};
}

/**
 * What opening a stream needs of its request and answer: koa's context for the router's route,
 * or the request listener's own (src/http/realtimeStream.ts), which keeps no per-request objects
 * for the stream's life.
 */
export interface StreamExchange {
  /** A request header, '' when absent. */
  header(name: string): string;
  /** The `lastEventId` query parameter. */
  queryLastEventId(): unknown;
  setCookie(value: string): void;
  /** Answers a refusal in the error form, `Retry-After` with it when the answer says when. */
  refuse(answer: ErrorAnswer, message: string): void;
  /** Sends the stream's head: 200, the stream's headers and those the exchange collected. */
  writeHead(): void;
}

/** Admits the connection, records the client, then hands the response over to its frames. */
export async function openStream(
  req: IncomingMessage,
  res: ServerResponse,
  exchange: StreamExchange,
  work: WorkContext,
  { realtime, addressing }: Pick<HttpDeps, 'realtime' | 'addressing'>,
): Promise<void> {
  const { hub, sessions, cookies, browserCookies, log, admission } = realtime;
  // The socket's address, or with TRUST_PROXY the proxy's X-Forwarded-For entry; IPv6 by network.
  const address = clientGroup(req, addressing);
  const refused = admission.admit(address);
  if (refused) {
    const retryAfterSeconds = ADMISSION_RETRY_AFTER_SECONDS;
    const answer: ErrorAnswer =
      refused.status === 429 ? { status: 429, data: { reason: 'too_many_connections', retryAfterSeconds } } : { status: 503, data: { reason: 'unavailable', retryAfterSeconds } };
    exchange.refuse(answer, refused.message);
    return;
  }
  // One listener for the response's close, which gives the slot back and, once open, closes the
  // client: `on`, since a response closes once and `once` would keep a wrapper for the stream's life.
  let client: ClientHandle | undefined;
  res.on('close', () => {
    admission.release(address);
    client?.close();
  });
  const cookieHeader = exchange.header('cookie') || undefined;
  const session = await sessions.resolve(cookies.read(cookieHeader));
  // The browser's client binding (kept across its connections): its login page goes straight on.
  const binding = browserCookies.clientBinding(cookieHeader) ?? newBinding();
  exchange.setCookie(browserCookies.issueClientBinding(binding));
  // The header, or the query for clients that cannot set headers on a new connection.
  const lastEventId = parseLastEventId(exchange.header('last-event-id') || exchange.queryLastEventId());
  let opened: ClientHandle;
  try {
    opened = await hub.open({ work, session, lastEventId, opener: { ...pageOrigin(exchange.header('origin')), browser: hashBinding(binding) } });
  } catch (error) {
    if (!(error instanceof HubClosedError)) throw error;
    exchange.refuse({ status: 503, data: { reason: 'unavailable' } }, 'The service is shutting down; reconnect in a moment');
    return;
  }
  // The browser left while its client was being recorded.
  if (res.destroyed) {
    opened.close();
    return;
  }
  client = opened;
  const { socket } = req;
  socket.setTimeout(0);
  socket.setNoDelay(true);
  // No TCP keep-alive: its probes start after hours of silence (the system's default) and only
  // while nothing is unacknowledged, and the heartbeat never leaves a stream silent that long. A
  // peer that vanished is found by the kernel's retransmission timeout on what we write.
  exchange.writeHead();
  // The header block goes out as a string of its own, which flattens it: sent joined to the first
  // frame, Node keeps it for the stream's whole life as the many pieces it was built from. Corked,
  // it still leaves in the same write as PB_CONNECT.
  socket.cork();
  try {
    res.flushHeaders();
    // The response too: the hub paces a replay to it and cuts off a reader that stops taking live frames.
    opened.start(new FrameWriter(res, opened.clientId, log), res);
  } finally {
    socket.uncork();
  }
}

/** The router's route on koa's context (a HEAD; GET is answered before koa). */
function koaExchange(ctx: RouteContext): StreamExchange {
  return {
    header: (name) => ctx.get(name),
    queryLastEventId: () => ctx.query.lastEventId,
    setCookie: (value) => ctx.append('Set-Cookie', value),
    refuse: ({ status, data }, message) => {
      ctx.status = status;
      if ('retryAfterSeconds' in data && data.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(data.retryAfterSeconds));
      ctx.body = { code: status, message, data };
    },
    writeHead: () => {
      ctx.respond = false;
      ctx.status = 200;
      ctx.res.writeHead(200, SSE_HEADERS);
    },
  };
}

/** Writes a client's frames to its response. A class: one lives as long as its stream. */
class FrameWriter implements Partial<Observer<Frame>> {
  constructor(
    private readonly res: ServerResponse,
    private readonly clientId: string,
    private readonly log: Logger,
  ) {}

  next(frame: Frame): void {
    const { res } = this;
    if (!this.open) return;
    // A frame that cannot be formatted or written ends this connection only: thrown into the
    // hub's subject, RxJS would rethrow it asynchronously and end the process.
    try {
      res.write(formatFrame(frame));
    } catch (error) {
      this.log.error({ err: error, clientId: this.clientId, frame: frame.type }, 'could not write a realtime frame; closing the connection');
      res.destroy();
    }
  }

  complete(): void {
    if (this.open) this.res.end();
  }

  error(): void {
    this.res.destroy();
  }

  private get open(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }
}

/** One server-sent event of the stream, its `data` by the named frame schema. */
const sseEvent = (event: string, frame: string) => ({
  type: 'object',
  required: ['event', 'id', 'data'],
  properties: { event: { const: event }, id: { type: 'integer' }, data: { $ref: `#/components/schemas/${frame}` } },
});

export const realtimeRoutes = ({ replayMs }: ApiSettings) => [
  route({
    method: 'get',
    path: STREAM_PATH,
    tag: 'realtime',
    summary: 'Open the realtime connection (server-sent events)',
    description:
      'No apiKey; a session cookie starts the client signed in. The answer sets the `cb_client` cookie that binds the client to this browser for the login page. ' +
      "Frames have `id`, `event` and `data` (JSON) lines: `PB_CONNECT` first (`PbConnectFrame`), then `login` after sign-in (`LoginFrame`) and `message` after a push (`MessageFrame`, its `id` the push's log position). Comment frames keep the connection alive.",
    access: { kind: 'public', browser: 'cors' },
    parameters: [
      {
        name: 'Last-Event-ID',
        in: 'header',
        description: `resume after this frame id: a signed-in client gets the messages it missed (within ${Math.round(replayMs / 1000)} s)`,
        schema: { type: 'string' },
      },
      { name: 'lastEventId', in: 'query', description: 'the same, for clients that cannot set the header', schema: { type: 'string' } },
    ],
    ok: {
      description: 'The event stream: one `PB_CONNECT` frame, then `login` and `message` frames',
      media: {
        'text/event-stream': {
          type: 'array',
          description: 'Server-sent events, one after another: each has an `event` name, an `id` (a log position) and a `data` line holding the JSON of its schema',
          items: { oneOf: [sseEvent('PB_CONNECT', 'PbConnectFrame'), sseEvent('login', 'LoginFrame'), sseEvent('message', 'MessageFrame')] },
        },
      },
    },
    answers: {
      429: {
        description:
          'This address holds REALTIME_MAX_CONNECTIONS_PER_IP streams already, or opened streams faster than REALTIME_CONNECTS_PER_SECOND (after REALTIME_CONNECTS_BURST at once); retry after `Retry-After` seconds',
        json: ErrorBody,
      },
      503: {
        description:
          'The service is shutting down, the node holds REALTIME_MAX_CONNECTIONS streams, or it takes no more than REALTIME_CONNECTS_PER_NODE_PER_SECOND new ones; reconnect in a moment',
        json: ErrorBody,
      },
    },
    handle: (ctx, _input, deps) => openStream(ctx.req, ctx.res, koaExchange(ctx), ctx.state.work, deps),
  }),

  route({
    method: 'post',
    path: '/api/logout',
    tag: 'sign-in',
    summary: 'End the browser session',
    description: "No apiKey: the session cookie says whose session; the answer clears it. A browser page must be on the service's own origin or one listed in CORS_ORIGINS.",
    access: { kind: 'public', browser: 'cookieWrite' },
    ok: { description: 'Signed out (also when there was no session)', json: SuccessBody },
    answers: { 403: { description: "Sent from a page on an origin that is neither the service's nor in CORS_ORIGINS", json: ErrorBody } },
    async handle(ctx, _input, { realtime: { cookies, sessions } }) {
      const sessionId = cookies.read(ctx.get('Cookie') || undefined);
      if (sessionId) await sessions.end(ctx.state.work, sessionId);
      ctx.append('Set-Cookie', cookies.clear());
      ctx.set('Cache-Control', 'no-store');
      return { code: 0 as const, msg: 'success' };
    },
  }),
];
