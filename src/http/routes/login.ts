// Spec §4.8: the login page (`/<COMMUNITY_NAME>/login?client_id=`) sends the browser to the
// platform's OpenID page; the platform sends it back to the callback, which signs the client in.
// Both are bound to the browser: the login page sets the login cookie the callback requires, and
// goes straight on only for the browser whose client cookie the connection was opened with.
import Router from '@koa/router';
import { SignInError } from '../../domain/login.js';
import { newBinding } from '../../realtime/browserCookies.js';
import type { HttpDeps } from '../deps.js';
import { confirmPage, refusalPage, successPage, toPlatform } from './signInPages.js';

export function loginRouter({ realtime }: HttpDeps): Router {
  const { signIn, cookies, browserCookies, communityName } = realtime;
  const router = new Router({ prefix: `/${communityName}` });

  router.get('/login', async (ctx) => {
    const clientId = typeof ctx.query.client_id === 'string' ? ctx.query.client_id.trim() : undefined;
    const cookieHeader = ctx.get('Cookie') || undefined;
    // Kept across attempts in this browser, so that two sign-in windows do not undo each other.
    const login = browserCookies.loginBinding(cookieHeader) ?? newBinding();
    try {
      const attempt = await signIn.start(clientId || undefined, { login, client: browserCookies.clientBinding(cookieHeader) });
      ctx.append('Set-Cookie', browserCookies.issueLoginBinding(login));
      if (attempt.sameBrowser) toPlatform(ctx, attempt.platformUrl);
      else confirmPage(ctx, attempt.origin, attempt.platformUrl);
    } catch (error) {
      if (error instanceof SignInError) return refusalPage(ctx, error.reason);
      throw error;
    }
  });

  router.get('/callback', async (ctx) => {
    try {
      const { user, sessionId, clientBound } = await signIn.complete(ctx.query, browserCookies.loginBinding(ctx.get('Cookie') || undefined));
      ctx.append('Set-Cookie', cookies.issue(sessionId));
      successPage(ctx, user.nickname || user.name, clientBound);
    } catch (error) {
      if (error instanceof SignInError) return refusalPage(ctx, error.reason);
      throw error;
    }
  });

  return router;
}
