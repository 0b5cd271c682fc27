// docs/api.md "GET /fishpi/login": the login page (`/<COMMUNITY_NAME>/login?client_id=`) sends the browser to the
// platform's OpenID page; the platform sends it back to the callback, which signs the client in.
// Both are bound to the browser: the login page sets the login cookie the callback requires, and
// goes straight on only for the browser whose client cookie the connection was opened with.
import { SignInError } from '../../domain/login.js';
import { newBinding } from '../../realtime/browserCookies.js';
import { confirmPage, refusalPage, successPage, toPlatform } from '../pages/signIn.js';
import { route, type ApiSettings, type RouteContext } from '../route.js';

const html = (description: string) => ({ description, media: { 'text/html': { type: 'string' } } });

/** A refusal of the sign-in is a page that says what went wrong; anything else is unexpected. */
async function orRefusalPage(ctx: RouteContext, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof SignInError) return refusalPage(ctx, error.reason);
    throw error;
  }
}

export const signInRoutes = ({ communityName }: ApiSettings) => [
  route({
    method: 'get',
    path: `/${communityName}/login`,
    tag: 'sign-in',
    summary: 'The login page for a realtime client',
    description:
      "Sends the browser that holds the connection (its `cb_client` cookie) to the community platform's OpenID sign-in, which returns to the callback; any other browser first sees a confirmation naming the site that opened the connection. Sets the `cb_login` cookie the callback requires.",
    access: { kind: 'public' },
    parameters: [{ name: 'client_id', in: 'query', description: 'from the `PB_CONNECT` frame', schema: { type: 'string' } }],
    ok: html('The confirmation, for a browser that does not hold the connection'),
    answers: { 302: { description: "To the platform's sign-in page" }, '4XX': html('A page that says what went wrong (missing, unknown or closed client, …)') },
    handle: (ctx, _input, { realtime: { signIn, browserCookies } }) =>
      orRefusalPage(ctx, async () => {
        const clientId = typeof ctx.query.client_id === 'string' ? ctx.query.client_id.trim() : undefined;
        const cookieHeader = ctx.get('Cookie') || undefined;
        // Kept across attempts in this browser, so that two sign-in windows do not undo each other.
        const login = browserCookies.loginBinding(cookieHeader) ?? newBinding();
        const attempt = await signIn.start(clientId || undefined, { login, client: browserCookies.clientBinding(cookieHeader) });
        ctx.append('Set-Cookie', browserCookies.issueLoginBinding(login));
        if (attempt.sameBrowser) toPlatform(ctx, attempt.platformUrl);
        else confirmPage(ctx, attempt.origin, attempt.platformUrl);
      }),
  }),

  route({
    method: 'get',
    path: `/${communityName}/callback`,
    tag: 'sign-in',
    summary: "Where the platform's sign-in returns",
    description:
      'In the browser that opened the login page only: checks the assertion, has the platform verify it, signs the client in (its connection receives `login`) and sets the session cookie.',
    access: { kind: 'public' },
    ok: html('"Login succeeded", with a button that closes the window'),
    answers: { '4XX': html('A page that says what went wrong (cancelled, expired, invalid assertion, …)'), 502: html('The platform could not be reached to verify the sign-in') },
    handle: (ctx, _input, { realtime: { signIn, cookies, browserCookies } }) =>
      orRefusalPage(ctx, async () => {
        const { user, sessionId, clientBound } = await signIn.complete(ctx.state.work, ctx.query, browserCookies.loginBinding(ctx.get('Cookie') || undefined));
        ctx.append('Set-Cookie', cookies.issue(sessionId));
        successPage(ctx, user.nickname || user.name, clientBound);
      }),
  }),
];
