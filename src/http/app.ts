// The koa application: request log and error mapping first, then one router per area.
import Koa from 'koa';
import type { Logger } from '../log.js';
import type { HttpDeps } from './deps.js';
import { adminGuards } from './middleware/admin.js';
import { errorMiddleware } from './middleware/errors.js';
import { requestLog } from './middleware/requestLog.js';
import { healthRouter } from './routes/health.js';
import { homeRouter } from './routes/home.js';
import { auditRouter } from './routes/audit.js';
import { messageRouter } from './routes/message.js';
import { openApiRouter } from './routes/openapi.js';
import { platformOperationsRouter } from './routes/platformOperations.js';
import { vipRouter } from './routes/vip.js';
import { loginRouter } from './routes/login.js';
import { realtimeRouter } from './routes/realtime.js';
import { userGetRouter } from './routes/userGet.js';
import { operationsRouter } from './routes/operations.js';
import { noSniff } from './securityHeaders.js';

export function createHttpApp(deps: HttpDeps, log: Logger): Koa {
  const app = new Koa();
  // TRUST_PROXY: one reverse proxy in front; ctx.ip is the right-most X-Forwarded-For entry, the
  // address that proxy saw (entries to its left are whatever the client wrote).
  app.proxy = deps.trustProxy;
  app.maxIpsCount = 1;
  const onUnexpected = (error: unknown, path: string) => log.error({ err: error, path }, 'unexpected error');
  app.use(requestLog(log, deps.metrics));
  app.use(errorMiddleware(onUnexpected));
  app.use(noSniff);
  // Admin routes carry their own chain (key, permission, rate limit, body, Idempotency-Key).
  const guards = adminGuards(deps, onUnexpected);
  for (const router of [platformOperationsRouter(deps, guards), vipRouter(deps, guards), messageRouter(deps, guards), operationsRouter(deps, guards), auditRouter(deps, guards), userGetRouter(deps, guards)]) {
    app.use(router.routes()).use(router.allowedMethods());
  }
  for (const router of [homeRouter(), openApiRouter(deps), healthRouter(deps)]) app.use(router.routes()).use(router.allowedMethods());
  // Realtime stream, logout and sign-in pages.
  for (const router of [realtimeRouter(deps), loginRouter(deps)]) app.use(router.routes()).use(router.allowedMethods());
  return app;
}
