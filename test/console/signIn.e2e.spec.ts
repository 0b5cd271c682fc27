// Operators sign in through the platform's OpenID, with every check the players' sign-in has;
// their session is a cookie of its own, and every change needs the session's token and the
// service's own Origin.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/main.js';
import { ALICE, BOB, withHarness } from '../support/harness.js';
import { consoleGet, consolePost, signInAt, signInOperator } from './operatorSignIn.js';

const ON = { CONSOLE_ADMINS: ALICE.oId };

test('an operator signs in: a Strict, HttpOnly session cookie on /console, then /console/ and who they are', () =>
  withHarness(ON, async (h) => {
    const { callback } = await signInAt(h, ALICE.oId);
    assert.is(callback.status, 303);
    assert.is(callback.headers.get('location'), '/console/');
    const session = callback.headers.getSetCookie().find((c) => c.startsWith('cb_console='))!;
    assert.match(session, /^cb_console=[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]{43}; Path=\/console; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    const operator = await signInOperator(h, ALICE.oId);
    const me = await consoleGet(h, operator, '/console/api/me');
    assert.equal([me.body.oId, me.body.name, me.body.nickname], [ALICE.oId, ALICE.userName, ALICE.nickname]);
    const started = (await h.events('consolesession-')).filter((e) => e.type === 'ConsoleSessionStarted');
    assert.is(started.length, 2);
    assert.is((started[0]!.data as { oId: string }).oId, ALICE.oId);
    const completed = (await h.events('login-')).filter((e) => e.type === 'LoginCompleted');
    assert.is(completed.length, 2, 'the attempts are closed as completed');
  }));

test('an account CONSOLE_ADMINS does not list gets a 403 page after signing in, and no session', () =>
  withHarness(ON, async (h) => {
    const { callback } = await signInAt(h, BOB.oId);
    assert.is(callback.status, 403);
    assert.match(await callback.text(), 'Not a console operator');
    assert.ok(!callback.headers.getSetCookie().some((c) => c.startsWith('cb_console=')));
    const failed = (await h.events('login-')).find((e) => e.type === 'LoginFailed');
    const { reason, detail } = failed!.data as { reason: string; detail: string };
    assert.equal([reason, detail], ['not-operator', `${BOB.oId} is not in CONSOLE_ADMINS`]);
    assert.is((await h.events('consolesession-')).length, 0);
  }));

test('the callback refuses a browser that did not start the sign-in, and a state used once', () =>
  withHarness(ON, async (h) => {
    const login = await fetch(`${h.url}/console/login`, { redirect: 'manual' });
    const platform = await fetch(`${login.headers.get('location')}&sim_user=${ALICE.oId}`, { redirect: 'manual' });
    const callbackUrl = platform.headers.get('location')!;
    const elsewhere = await fetch(callbackUrl, { redirect: 'manual', headers: { Cookie: 'cb_console_login=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    assert.is(elsewhere.status, 403);
    assert.match(await elsewhere.text(), 'not started in this browser');
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    assert.is((await fetch(callbackUrl, { redirect: 'manual', headers: { Cookie: cookie } })).status, 303);
    assert.is((await fetch(callbackUrl, { redirect: 'manual', headers: { Cookie: cookie } })).status, 409, 'single use');
  }));

test('a player’s sign-in state is unknown to the console callback', () =>
  withHarness(ON, async (h) => {
    const stream = await fetch(`${h.url}/api/realtime`);
    const reader = stream.body!.getReader();
    const clientId = /"client_id":"([^"]+)"/.exec(new TextDecoder().decode((await reader.read()).value))![1]!;
    const login = await fetch(`${h.url}/fishpi/login?client_id=${clientId}`, { redirect: 'manual' });
    const state = /state%3D([A-Za-z0-9_-]{43})/.exec(login.headers.get('location') ?? (await login.text()))![1]!;
    const cookie = login.headers
      .getSetCookie()
      .find((c) => c.startsWith('cb_login='))!
      .split(';')[0]!
      .replace('cb_login', 'cb_console_login');
    const res = await fetch(`${h.url}/console/callback?state=${state}`, { redirect: 'manual', headers: { Cookie: cookie } });
    assert.is(res.status, 400);
    assert.match(await res.text(), 'Invalid sign-in link');
    await reader.cancel();
  }));

test('without a live session the API answers 401 in the error form', () =>
  withHarness(ON, async (h) => {
    const res = await h.get('/console/api/me');
    assert.is(res.status, 401);
    assert.equal(res.body, { code: 401, message: 'Sign in to the console first: /console/login', data: { reason: 'unauthenticated' } });
    const forged = await h.request('GET', '/console/api/me', { headers: { Cookie: 'cb_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.forged' } });
    assert.is(forged.status, 401);
  }));

test('a change without the token, with another token, or from another origin is refused with 403 and changes nothing', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const refused = [
      await consolePost(h, operator, '/console/api/logout', undefined, { 'X-Console-Token': '' }),
      await consolePost(h, operator, '/console/api/logout', undefined, { 'X-Console-Token': 'x'.repeat(43) }),
      await consolePost(h, operator, '/console/api/logout', undefined, { Origin: 'https://evil.example' }),
      await consolePost(h, operator, '/console/api/logout', undefined, { Origin: 'null' }),
    ];
    assert.equal(
      refused.map((r) => r.status),
      [403, 403, 403, 403],
    );
    assert.match(refused[0]!.body.message, 'X-Console-Token');
    assert.match(refused[2]!.body.message, 'Origin https://evil.example may not make this request');
    const noOrigin = await h.request('POST', '/console/api/logout', { headers: { Cookie: operator.cookie, 'X-Console-Token': operator.token } });
    assert.is(noOrigin.status, 403, 'a change must name its origin');
    assert.is((await consoleGet(h, operator, '/console/api/me')).status, 200, 'still signed in');
  }));

test('logout ends the session on the log and clears the cookie', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const out = await consolePost(h, operator, '/console/api/logout');
    assert.is(out.status, 200, out.text);
    assert.match(out.headers.get('set-cookie')!, /^cb_console=; Path=\/console; Max-Age=0; HttpOnly; SameSite=Strict/);
    assert.is((await consoleGet(h, operator, '/console/api/me')).status, 401);
    assert.ok((await h.events('consolesession-')).some((e) => e.type === 'ConsoleSessionEnded'));
  }));

test('an operator removed from CONSOLE_ADMINS is refused at the next request', () =>
  withHarness({ CONSOLE_ADMINS: `${ALICE.oId},${BOB.oId}` }, async (h) => {
    const operator = await signInOperator(h, BOB.oId);
    // Another node on the same store and secret, started with a shorter list.
    const other = await startService(
      loadConfig({ PORT: '0', DATA_DIR: h.dataDir, COMMUNITY_URL: h.simUrl, COMMUNITY_KEY: SIMULATOR_KEY, LOG_LEVEL: 'silent', CONSOLE_ADMINS: ALICE.oId, NODE_ID: 'other-node' }),
    );
    try {
      assert.is((await consoleGet(h, operator, '/console/api/me')).status, 200);
      const refused = await fetch(`${other.url}/console/api/me`, { headers: { Cookie: operator.cookie } });
      assert.is(refused.status, 403);
    } finally {
      await other.close();
    }
  }));

test('console pages: the policy allows the console’s own files only, no framing, no sniffing, no Referer', () =>
  withHarness({ ...ON }, async (h) => {
    const shell = await h.get('/console/');
    assert.is(shell.status, 200);
    const csp = shell.headers.get('content-security-policy')!;
    for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"])
      assert.ok(csp.includes(directive), directive);
    assert.not.match(csp, /unsafe-inline|unsafe-eval/);
    assert.is(shell.headers.get('x-content-type-options'), 'nosniff');
    assert.is(shell.headers.get('referrer-policy'), 'no-referrer');
    assert.is(shell.headers.get('x-frame-options'), 'DENY');
    assert.not.match(shell.text, /<script>|<style>| style=/, 'nothing inline');
    assert.is((await h.get('/console')).headers.get('location'), '/console/');
  }));

test('on an https PUBLIC_URL the console’s cookies are Secure', () =>
  withHarness({ ...ON, PUBLIC_URL: 'https://bridge.example' }, async (h) => {
    const login = await fetch(`${h.url}/console/login`, { redirect: 'manual' });
    assert.match(login.headers.getSetCookie()[0]!, /^cb_console_login=[A-Za-z0-9_-]{32}; Path=\/console\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
  }));

test.run();
