// Every /console path: the front-end's shell and files, the operator sign-in, and the JSON API
// behind the session and CSRF guards; or, with the console off, the page that says so.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { SignInError } from '../domain/login.js';
import { mountOperatorRoutes } from '../http/mount.js';
import { contentSecurityPolicy, htmlPageHeaders } from '../http/securityHeaders.js';
import type { ConsoleAssets } from './assets.js';
import type { ConsoleRoute } from './api/consoleRoute.js';
import { eventEndpoints } from './api/events.js';
import { keyEndpoints } from './api/keys.js';
import { operationEndpoints } from './api/operations.js';
import { onlineEndpoints } from './api/online.js';
import { overviewEndpoints } from './api/overview.js';
import { sessionEndpoints } from './api/session.js';
import { userEndpoints } from './api/users.js';
import { webhookEndpoints } from './api/webhooks.js';
import { changeStream } from './changes.js';
import type { ConsoleDeps } from './deps.js';
import { requireConsolePage, requireOperator, type OperatorState } from './guards.js';
import { consoleHeaders } from './headers.js';
import { consoleOffPage, refusalPage, shellPage } from './pages.js';

export const ENDPOINTS: readonly ConsoleRoute[] = [
  ...sessionEndpoints,
  ...overviewEndpoints,
  ...onlineEndpoints,
  ...keyEndpoints,
  ...userEndpoints,
  ...operationEndpoints,
  ...webhookEndpoints,
  ...eventEndpoints,
];

export function consoleRouter(deps: ConsoleDeps, assets: ConsoleAssets): Router<OperatorState> {
  const { cookies, signIn } = deps;
  const router = new Router<OperatorState>({ sensitive: true, strict: true });
  router.use(consoleHeaders);

  router.get('/console', (ctx) => ctx.redirect('/console/'));
  router.get('/console/', (ctx) => shellPage(ctx, assets.scripts));
  const { watchChanges } = assets;
  // Live reload only, and only for a signed-in operator.
  if (watchChanges) router.get('/console/assets/changes', requireOperator(deps), (ctx) => changeStream(ctx, deps.streams, watchChanges));
  router.get('/console/assets/:file', async (ctx) => {
    const asset = await assets.get(ctx.params.file!);
    if (!asset) return;
    ctx.type = asset.type;
    ctx.body = asset.body;
  });

  router.get('/console/login', async (ctx) => {
    // Kept across attempts in this browser, so that two sign-in tabs do not undo each other.
    const binding = cookies.loginBinding(ctx.get('Cookie') || undefined) ?? cookies.newLoginBinding();
    const platformUrl = await signIn.start(binding);
    ctx.append('Set-Cookie', cookies.issueLoginBinding(binding));
    ctx.redirect(platformUrl);
  });

  router.get('/console/callback', async (ctx) => {
    try {
      const session = await signIn.complete(ctx.state.work, ctx.query, cookies.loginBinding(ctx.get('Cookie') || undefined));
      ctx.append('Set-Cookie', cookies.issueSession(session.sessionId));
      ctx.status = 303;
      ctx.redirect('/console/');
    } catch (error) {
      if (error instanceof SignInError) return refusalPage(ctx, error.reason);
      throw error;
    }
  });

  mountOperatorRoutes(router, ENDPOINTS, [requireOperator(deps), requireConsolePage(deps)], deps);
  return router;
}

export const isConsolePath = (path: string) => path === '/console' || path.startsWith('/console/');

/**
 * With the console off, a browser that opens a /console page is told so, and how to turn it on,
 * with a 404. A client that prefers JSON, or states no preference (curl, fetch), gets the API's
 * 404 as before. Not async: every API request passes here, and would get a promise more.
 */
export const consoleOffRoutes: Middleware = (ctx, next) => {
  if (!isConsolePath(ctx.path) || (ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.accepts('json', 'html') !== 'html') return next();
  // The page loads nothing at all: a policy that allows nothing.
  ctx.set({ ...htmlPageHeaders(contentSecurityPolicy()), 'Cache-Control': 'no-store' });
  consoleOffPage(ctx);
};
