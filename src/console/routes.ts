// Every /console path: the front-end's shell and files, the operator sign-in, and the JSON API
// behind the session and CSRF guards.
import Router from '@koa/router';
import { SignInError } from '../domain/login.js';
import type { ConsoleAssets } from './assets.js';
import { mountEndpoints, type AnyEndpoint } from './api/declare.js';
import { eventEndpoints } from './api/events.js';
import { keyEndpoints } from './api/keys.js';
import { operationEndpoints } from './api/operations.js';
import { overviewEndpoints } from './api/overview.js';
import { sessionEndpoints } from './api/session.js';
import { userEndpoints } from './api/users.js';
import { changeStream } from './changes.js';
import type { ConsoleDeps } from './deps.js';
import { requireConsolePage, requireOperator, type OperatorState } from './guards.js';
import { consoleHeaders } from './headers.js';
import { refusalPage, shellPage } from './pages.js';

export const ENDPOINTS: readonly AnyEndpoint[] = [...sessionEndpoints, ...overviewEndpoints, ...keyEndpoints, ...userEndpoints, ...operationEndpoints, ...eventEndpoints];

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
      const session = await signIn.complete(ctx.query, cookies.loginBinding(ctx.get('Cookie') || undefined));
      ctx.append('Set-Cookie', cookies.issueSession(session.sessionId));
      ctx.status = 303;
      ctx.redirect('/console/');
    } catch (error) {
      if (error instanceof SignInError) return refusalPage(ctx, error.reason);
      throw error;
    }
  });

  mountEndpoints(router, ENDPOINTS, [requireOperator(deps), requireConsolePage(deps)], deps);
  return router;
}
