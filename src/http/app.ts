// The koa application: error mapping first, then body parsing, then one router per area.
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Logger } from '../log.js';
import type { HttpDeps } from './deps.js';
import { requireValidKeyUnder } from './middleware/apiKey.js';
import { errorMiddleware } from './middleware/errors.js';
import { idempotency } from './middleware/idempotency.js';
import { rateLimitByKey } from './middleware/rateLimit.js';
import { requestLog } from './middleware/requestLog.js';
import { healthRouter } from './routes/health.js';
import { auditRouter } from './routes/audit.js';
import { messageRouter } from './routes/message.js';
import { openApiRouter } from './routes/openapi.js';
import { platformOperationsRouter } from './routes/platformOperations.js';
import { vipRouter } from './routes/vip.js';
import { loginRouter } from './routes/login.js';
import { realtimeRouter } from './routes/realtime.js';
import { userGetRouter } from './routes/userGet.js';
import { noSniff } from './securityHeaders.js';
import { invalid } from './validation.js';

export const MAX_BODY = '1mb';

export function createHttpApp(deps: HttpDeps, log: Logger): Koa {
  const app = new Koa();
  const onUnexpected = (error: unknown, path: string) => log.error({ err: error, path }, 'unexpected error');
  app.use(requestLog(log, deps.metrics));
  app.use(errorMiddleware(onUnexpected));
  app.use(noSniff);
  // Authentication before the body is read: without a valid key, nothing about the body is judged.
  app.use(requireValidKeyUnder('/adm/', deps.readModels.apiKeys, deps.clock));
  app.use(async (ctx, next) => {
    // Every body the API takes is JSON; anything else is refused rather than parsed as empty.
    if (ctx.method === 'POST' && ctx.request.length && !ctx.is('application/json')) {
      throw invalid('body', 'Content-Type must be application/json');
    }
    await next();
  });
  if (deps.rateLimit) app.use(rateLimitByKey(deps.rateLimit));
  app.use(koaBody({ json: true, jsonStrict: true, jsonLimit: MAX_BODY, urlencoded: false, text: false, multipart: false, patchNode: false }));
  app.use(idempotency(deps.idempotency, onUnexpected));
  for (const router of [platformOperationsRouter(deps), vipRouter(deps), messageRouter(deps)]) {
    app.use(router.routes()).use(router.allowedMethods());
  }
  for (const router of [auditRouter(deps), openApiRouter(deps), healthRouter(deps)]) app.use(router.routes()).use(router.allowedMethods());
  // Realtime stream, logout, sign-in pages and the client lookup (issue 3).
  for (const router of [realtimeRouter(deps), loginRouter(deps)]) app.use(router.routes()).use(router.allowedMethods());
  const userGet = userGetRouter(deps);
  app.use(userGet.routes()).use(userGet.allowedMethods());
  return app;
}
