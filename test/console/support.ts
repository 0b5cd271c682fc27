// The console's sign-in without a browser: the login page, the simulator's OpenID page (its
// `sim_user` shortcut confirms as that user), and the callback, carrying the cookies a browser
// would; then the session's token for changes.
import * as assert from 'uvu/assert';
import type { Harness } from '../support/harness.js';

export interface Operator {
  /** The Cookie header the console's pages send. */
  cookie: string;
  token: string;
  /** Set-Cookie of the session, as the callback sent it. */
  sessionCookie: string;
}

const cookiePair = (setCookie: string) => setCookie.split(';')[0]!;

/** Follows the sign-in as `oId` up to the callback's answer. */
export async function signInAt(h: Harness, oId: string): Promise<{ callback: Response; loginCookie: string }> {
  const login = await fetch(`${h.url}/console/login`, { redirect: 'manual' });
  assert.is(login.status, 302, 'the login page sends the browser to the platform');
  const loginCookie = cookiePair(login.headers.getSetCookie().find((c) => c.startsWith('cb_console_login='))!);
  const platform = await fetch(`${login.headers.get('location')}&sim_user=${oId}`, { redirect: 'manual' });
  const callback = await fetch(platform.headers.get('location')!, { headers: { Cookie: loginCookie }, redirect: 'manual' });
  return { callback, loginCookie };
}

export async function signInOperator(h: Harness, oId: string): Promise<Operator> {
  const { callback } = await signInAt(h, oId);
  assert.is(callback.status, 303, await callback.text());
  const sessionCookie = callback.headers.getSetCookie().find((c) => c.startsWith('cb_console='))!;
  const cookie = cookiePair(sessionCookie);
  const me = await h.request('GET', '/console/api/me', { headers: { Cookie: cookie } });
  assert.is(me.status, 200, me.text);
  return { cookie, token: me.body.token, sessionCookie };
}

/** A console page's change: the session cookie, the token and the service's own Origin. */
export function consolePost(h: Harness, operator: Operator, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return h.request('POST', path, {
    ...(body !== undefined && { body }),
    headers: { Cookie: operator.cookie, 'X-Console-Token': operator.token, Origin: new URL(h.url).origin, ...headers },
  });
}

export function consoleGet(h: Harness, operator: Operator, path: string) {
  return h.request('GET', path, { headers: { Cookie: operator.cookie } });
}
