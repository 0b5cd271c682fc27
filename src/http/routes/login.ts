// Spec §4.8: the login page (`/<COMMUNITY_NAME>/login?client_id=`) sends the browser to the
// platform's OpenID page; the platform sends it back to the callback, which signs the client in.
import Router from '@koa/router';
import { SignInError } from '../../domain/login.js';
import type { HttpDeps } from '../deps.js';
import { refusalPage, successPage } from './signInPages.js';

export function loginRouter({ realtime }: HttpDeps): Router {
  const { signIn, cookies, communityName } = realtime;
  const router = new Router({ prefix: `/${communityName}` });

  router.get('/login', async (ctx) => {
    const clientId = typeof ctx.query.client_id === 'string' ? ctx.query.client_id.trim() : undefined;
    try {
      const platformUrl = await signIn.start(clientId || undefined);
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.redirect(platformUrl);
    } catch (error) {
      if (error instanceof SignInError) return refusalPage(ctx, error.reason);
      throw error;
    }
  });

  router.get('/callback', async (ctx) => {
    try {
      const { user, sessionId, clientBound } = await signIn.complete(ctx.query);
      ctx.append('Set-Cookie', cookies.issue(sessionId));
      successPage(ctx, user.nickname || user.name, clientBound);
    } catch (error) {
      if (error instanceof SignInError) return refusalPage(ctx, error.reason);
      throw error;
    }
  });

  return router;
}
