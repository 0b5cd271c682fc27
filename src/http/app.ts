// The koa application: request log and error mapping first, then the declared routes.
import Koa, { type Middleware } from 'koa';
import type { Logger } from '../log.js';
import { apiRoutes } from './api/index.js';
import type { HttpDeps } from './deps.js';
import { errorMiddleware, errorRenderer } from './middleware/errors.js';
import { requestLog } from './middleware/requestLog.js';
import { mountRoutes } from './mount.js';
import { buildOpenApiDocument } from './openapi.js';
import { noSniff } from './securityHeaders.js';

/** `mounted`: routes served besides the API's (the operator console, when it is on). */
export function createHttpApp(deps: HttpDeps, log: Logger, mounted: Middleware[] = []): Koa {
  const app = new Koa();
  // TRUST_PROXY: one reverse proxy in front; ctx.ip is the right-most X-Forwarded-For entry, the
  // address that proxy saw (entries to its left are whatever the client wrote).
  app.proxy = deps.trustProxy;
  app.maxIpsCount = 1;
  const onUnexpected = (error: unknown, path: string) => log.error({ err: error, path }, 'unexpected error');
  app.use(requestLog(log, deps.metrics));
  const renderError = errorRenderer(onUnexpected, deps.api.maxBodyBytes);
  app.use(errorMiddleware(renderError));
  app.use(noSniff);
  for (const routes of mounted) app.use(routes);
  const routes = apiRoutes(deps.api);
  // Built on first request: the server's URL is known once it listens.
  let document: Record<string, unknown> | undefined;
  const router = mountRoutes(routes, { ...deps, apiDocument: () => (document ??= buildOpenApiDocument(routes, deps.api)) }, { renderError, onUnexpected });
  app.use(router.routes()).use(router.allowedMethods());
  return app;
}
