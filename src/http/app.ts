// The koa application: request log and error mapping first, then the declared routes.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import Koa, { type Middleware } from 'koa';
import type { Logger } from '../log.js';
import { apiRoutes } from './api/index.js';
import { isRealtimeStreamUrl } from './api/realtime.js';
import type { HttpDeps } from './deps.js';
import { errorMiddleware, errorRenderer } from './middleware/errors.js';
import { requestLog } from './middleware/requestLog.js';
import { mountRoutes } from './mount.js';
import { buildOpenApiDocument } from './openapi.js';
import { noSniff } from './securityHeaders.js';
import { realtimeConnectGate } from './realtimeConnectGate.js';
import { realtimeStream } from './realtimeStream.js';
import { signInPageGate } from './signInPageGate.js';

/** `mounted`: routes served besides the API's (the operator console, when it is on). */
function buildApp(deps: HttpDeps, log: Logger, mounted: Middleware[]) {
  const app = new Koa();
  // TRUST_PROXY: one reverse proxy in front; ctx.ip is the right-most X-Forwarded-For entry, the
  // address that proxy saw (entries to its left are whatever the client wrote).
  app.proxy = deps.addressing.trustProxy;
  app.maxIpsCount = 1;
  // What koa meets after the middlewares (a streamed body): a client that left in the middle of a
  // stream is ordinary; anything else goes to the log, never raw to stderr.
  app.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ERR_STREAM_PREMATURE_CLOSE') log.error({ err: error }, 'a response failed');
  });
  const onUnexpected = (error: unknown, path: string) => log.error({ err: error, path }, 'unexpected error');
  const renderError = errorRenderer(onUnexpected, deps.api.maxBodyBytes);
  const routes = apiRoutes(deps.api);
  // Built on first request: the server's URL is known once it listens.
  let document: Record<string, unknown> | undefined;
  const router = mountRoutes(routes, { ...deps, apiDocument: () => (document ??= buildOpenApiDocument(routes, deps.api)) }, { renderError, onUnexpected });
  const chain = [requestLog(log, deps.metrics, deps.nodeId), errorMiddleware(renderError), noSniff, ...mounted, router.routes() as Middleware];
  for (const middleware of chain) app.use(middleware);
  app.use(router.allowedMethods());
  return { app, renderError };
}

export function createHttpApp(deps: HttpDeps, log: Logger, mounted: Middleware[] = []): Koa {
  return buildApp(deps, log, mounted).app;
}

/**
 * The server's request listener. Sign-in pages and realtime connects past their rates are
 * refused before koa (src/http/signInPageGate.ts, src/http/realtimeConnectGate.ts). A realtime
 * stream is held for hours: `GET /api/realtime` is answered outside koa (src/http/realtimeStream.ts),
 * which keeps nothing of the request for the stream's life. Every other request is koa's.
 */
export function createRequestListener(deps: HttpDeps, log: Logger, mounted: Middleware[] = []): RequestListener {
  const { app, renderError } = buildApp(deps, log, mounted);
  const koa = app.callback();
  const refused = signInPageGate({
    paths: [`/${deps.api.communityName}/login`, `/${deps.api.communityName}/callback`, '/console/login', '/console/callback'],
    rates: deps.signInPageRates,
    addressing: deps.addressing,
    onRefused: (bound) => deps.metrics.signInPagesRefused.inc({ bound }),
  });
  const connectRefused = realtimeConnectGate({
    rates: deps.realtimeConnectRates,
    addressing: deps.addressing,
    onRefused: (bound) => deps.metrics.realtimeConnectsRefused.inc({ bound }),
  });
  const stream = realtimeStream({ deps, log, app, renderError });
  return (req: IncomingMessage, res: ServerResponse) => {
    if (refused(req, res)) return;
    if (req.method !== 'GET' || !isRealtimeStreamUrl(req.url)) return void koa(req, res);
    if (connectRefused(req, res)) return;
    stream(req, res);
  };
}
