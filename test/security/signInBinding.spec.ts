// "A sign-in is not bound to the browser that started it", as the attacks run: a prepared
// callback URL opened by a cookie-less browser (login CSRF), and a login link carrying the
// attacker's client_id opened by the victim. The browser side of the second, with a real
// browser and a game page on another site, is in browserBinding.spec.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BOB, startHarness, type Harness } from '../support/harness.js';
import { callback, connect, cookieFrom, platformAssertion, startLogin, visit } from '../support/streamsAndSignIn.js';

async function authenticated(h: Harness, clientId: string): Promise<boolean> {
  const { key } = await h.key(['user:get']);
  return (await h.get(`/adm/user/get?client_id=${clientId}`, key)).body.data.authenticated;
}

test('login CSRF: the attacker’s prepared callback URL signs no other browser in, and does not spend the state', async () => {
  const h = await startHarness();
  try {
    // The attacker signs in to their own account up to the callback, and keeps the URL.
    const attacker = await connect(h);
    const prepared = await platformAssertion(await startLogin(h, attacker.clientId), BOB.oId);
    // The victim's browser: no login cookie at all, or its own from a sign-in it started itself.
    const victim = await connect(h);
    await startLogin(h, victim.clientId);
    const victimsOwn = (await visit(`${h.url}/fishpi/login?client_id=${victim.clientId}`, { Cookie: victim.binding! })).headers.getSetCookie();
    for (const cookieHeader of ['', cookieFrom(victimsOwn, 'cb_login')!, `${cookieFrom(victimsOwn, 'cb_login')!}; ${victim.binding!}`]) {
      const res = await callback(prepared, { cookieHeader });
      assert.is(res.status, 403, cookieHeader);
      assert.match(res.text, /not started in this browser; nobody was signed in/);
      assert.is(res.cookie, undefined, 'no session cookie for the attacker’s account');
    }
    const events = await h.events();
    assert.is(events.filter((e) => ['SessionStarted', 'ClientSignedIn', 'LoginFailed', 'LoginClaimed'].includes(e.type)).length, 0);
    // Refused without a trace: the attacker's own browser still completes its own sign-in.
    assert.is((await callback(prepared)).status, 200);
    assert.is((await attacker.stream.next('login')).data.user.oId, BOB.oId);
    attacker.stream.close();
    victim.stream.close();
  } finally {
    await h.close();
  }
});

test('the attacker’s client_id in a login link opened by the victim: no redirect to the platform, a confirmation naming the site that opened the connection', async () => {
  const h = await startHarness();
  try {
    // A client can claim any Origin; the page shows what was recorded, escaped.
    const attacker = await connect(h, { headers: { Origin: 'http://evil.example:8080' } });
    const victim = await connect(h, { headers: { Origin: 'https://game.example' } });
    const link = `${h.url}/fishpi/login?client_id=${attacker.clientId}`;
    for (const cookie of [undefined, victim.binding!]) {
      const res = await visit(link, cookie ? { Cookie: cookie } : {});
      assert.is(res.status, 200, 'no redirect');
      assert.is(res.location, undefined);
      assert.match(res.text, /Confirm the sign-in/);
      assert.match(res.text, /http:\/\/evil\.example:8080 asks to sign in with your community account to the connection it opened/);
      assert.match(res.text, /Continue only if you just clicked “sign in” on http:\/\/evil\.example:8080 yourself/);
      const continueTo = /<a class="button" id="continue" href="([^"]+)">/.exec(res.text)?.[1]?.replaceAll('&amp;', '&');
      assert.ok(continueTo?.startsWith(`${h.simUrl}/openid/login?`), 'Continue goes to the platform');
      assert.match(res.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.is(res.headers.get('x-frame-options'), 'DENY');
      assert.ok(cookieFrom(res.headers.getSetCookie(), 'cb_login'), 'the attempt is bound to the browser that confirms');
    }
    assert.is(await authenticated(h, attacker.clientId), false);
    assert.equal(
      attacker.stream.frames.map((f) => f.event),
      ['PB_CONNECT'],
    );

    // The browser holding the connection goes straight on.
    const own = await visit(`${h.url}/fishpi/login?client_id=${victim.clientId}`, { Cookie: victim.binding! });
    assert.is(own.status, 302);
    assert.ok(own.location!.startsWith(`${h.simUrl}/openid/login?`));

    // A connection opened without an Origin (not by a web page), or with one that is not an origin.
    for (const headers of [{}, { Origin: 'null' }, { Origin: 'http://a.example/"><script>' }] as Record<string, string>[]) {
      const other = await connect(h, { headers });
      const res = await visit(`${h.url}/fishpi/login?client_id=${other.clientId}`);
      assert.is(res.status, 200);
      assert.match(res.text, /an unknown site asks to sign in/);
      assert.not.match(res.text, /<script>(?!document)/);
      other.stream.close();
    }
    attacker.stream.close();
    victim.stream.close();
  } finally {
    await h.close();
  }
});

test('the binding cookies: the stream’s is HttpOnly and Lax on http, SameSite=None; Secure on https; the login page’s lives as long as a state, on the sign-in paths only', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const [client] = (await stream.response).headers.getSetCookie();
    assert.match(client!, /^cb_client=[A-Za-z0-9_-]{32}; Path=\/; HttpOnly; SameSite=Lax$/);
    // The same browser keeps its value across connections.
    const again = await connect(h, { cookie: client!.split(';')[0]! });
    assert.is((await again.stream.response).headers.getSetCookie()[0]!.split(';')[0], client!.split(';')[0]);
    const login = (await visit(`${h.url}/fishpi/login?client_id=${clientId}`, { Cookie: client!.split(';')[0]! })).headers.getSetCookie();
    assert.equal(login.length, 1);
    assert.match(login[0]!, /^cb_login=[A-Za-z0-9_-]{32}; Path=\/fishpi\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
    stream.close();
    again.stream.close();
  } finally {
    await h.close();
  }
  const https = await startHarness({ env: { PUBLIC_URL: 'https://bridge.example' } });
  try {
    const { stream, clientId, binding } = await connect(https);
    assert.match((await stream.response).headers.getSetCookie()[0]!, /; HttpOnly; SameSite=None; Secure$/);
    const login = (await visit(`${https.url}/fishpi/login?client_id=${clientId}`, { Cookie: binding! })).headers.getSetCookie();
    assert.match(login[0]!, /; SameSite=Lax; Secure$/);
    stream.close();
  } finally {
    await https.close();
  }
});

test.run();
