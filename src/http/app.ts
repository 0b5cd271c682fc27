// The koa application: error mapping first, then body parsing, then one router per area.
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Logger } from '../log.js';
import type { HttpDeps } from './deps.js';
import { requireValidKeyUnder } from './middleware/apiKey.js';
import { errorMiddleware } from './middleware/errors.js';
import { auditRouter } from './routes/audit.js';
import { messageRouter } from './routes/message.js';
import { openApiRouter } from './routes/openapi.js';
import { platformOperationsRouter } from './routes/platformOperations.js';
import { vipRouter } from './routes/vip.js';
import { invalid } from './validation.js';

export const MAX_BODY = '1mb';

export function createHttpApp(deps: HttpDeps, log: Logger): Koa {
  const app = new Koa();
  app.use(errorMiddleware((error, path) => log.error({ err: error, path }, 'unexpected error')));
  // Authentication before the body is read: without a valid key, nothing about the body is judged.
  app.use(requireValidKeyUnder('/adm/', deps.readModels.apiKeys, deps.clock));
  app.use(async (ctx, next) => {
    // Every body the API takes is JSON; anything else is refused rather than parsed as empty.
    if (ctx.method === 'POST' && ctx.request.length && !ctx.is('application/json')) {
      throw invalid('body', 'Content-Type must be application/json');
    }
    await next();
  });
  app.use(koaBody({ json: true, jsonStrict: true, jsonLimit: MAX_BODY, urlencoded: false, text: false, multipart: false, patchNode: false }));
  for (const router of [platformOperationsRouter(deps), vipRouter(deps), messageRouter(deps)]) {
    app.use(router.routes()).use(router.allowedMethods());
  }
  for (const router of [auditRouter(deps), openApiRouter(deps)]) app.use(router.routes()).use(router.allowedMethods());
  return app;
}
