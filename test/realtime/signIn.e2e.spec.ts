// docs/api.md "Realtime and sign-in" and docs/architecture.md "Realtime": the login page, the OpenID dance against
// the simulator's provider, and every way an assertion is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';
import { applied, callback, connect, platformAssertion, signIn, SPEC_TIMESTAMP, startLogin, tamper, visit } from '../support/streamsAndSignIn.js';

const USER_FIELDS = ['avatar', 'collectionId', 'collectionName', 'created', 'email', 'emailVisibility', 'id', 'name', 'nickname', 'oId', 'updated', 'verified'];

async function loginEvents(h: Harness) {
  return (await h.events('login-')).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
}

async function lookup(h: Harness, clientId: string) {
  const { key } = await h.key(['user:get']);
  return h.get(`/adm/user/get?client_id=${clientId}`, key);
}

test('login page: a missing client_id is a 400 page, an unknown one a 404 page, both saying what to do', async () => {
  const h = await startHarness();
  try {
    for (const query of ['', '?client_id=', '?client_id=%20']) {
      const res = await visit(`${h.url}/fishpi/login${query}`);
      assert.is(res.status, 400, query);
      assert.match(res.headers.get('content-type')!, /^text\/html/);
      assert.match(res.text, /client_id/);
      assert.match(res.text, /Open the sign-in page from the application/);
    }
    for (const id of ['nope', 'A'.repeat(32), '../../etc/passwd']) {
      const res = await visit(`${h.url}/fishpi/login?client_id=${encodeURIComponent(id)}`);
      assert.is(res.status, 404, id);
      assert.match(res.text, /Reload the application page, then sign in again/);
    }
    assert.equal(await loginEvents(h), []);
  } finally {
    await h.close();
  }
});

test('login page: a connected client is sent to the platform with a fresh signed state under PUBLIC_URL, and nothing is recorded', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const asked = Date.now();
    const platformUrl = new URL(await startLogin(h, clientId));
    const answered = Date.now();
    assert.is(`${platformUrl.origin}${platformUrl.pathname}`, `${h.simUrl}/openid/login`);
    const q = platformUrl.searchParams;
    assert.is(q.get('openid.mode'), 'checkid_setup');
    assert.is(q.get('openid.realm'), h.url);
    const returnTo = new URL(q.get('openid.return_to')!);
    assert.is(`${returnTo.origin}${returnTo.pathname}`, `${h.url}/fishpi/callback`);
    const state = returnTo.searchParams.get('state')!;
    assert.match(state, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/); // content and its HMAC
    const content = JSON.parse(Buffer.from(state.split('.')[0]!, 'base64url').toString());
    assert.is(content.c, clientId);
    // LOGIN_STATE_TTL_MS after the moment the page was asked for (somewhere within the request).
    assert.ok(content.e >= asked + 10 * 60_000 && content.e <= answered + 10 * 60_000, `expires at ${content.e}, asked at ${asked}`);

    const second = new URL(new URL(await startLogin(h, clientId)).searchParams.get('openid.return_to')!).searchParams.get('state');
    assert.is.not(second, state);
    assert.equal(await loginEvents(h), [], 'a login page records nothing');
    stream.close();
  } finally {
    await h.close();
  }
});

test('full sign-in: the connection receives login with every user field, the page says so and can close itself', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const res = await callback(await platformAssertion(await startLogin(h, clientId), ALICE.oId));
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/html/);
    assert.match(res.text, /登录成功 \/ Signed in/);
    assert.match(res.text, /<button type="button" id="close">/);
    assert.match(res.text, /addEventListener\('click',function\(\)\{window.close\(\)\}\)/);
    assert.is(res.headers.get('referrer-policy'), 'no-referrer');
    assert.is(res.headers.get('cache-control'), 'no-store');

    const login = await stream.next('login');
    assert.is(login.data.action, 'login');
    const user = login.data.user;
    assert.equal(Object.keys(user).sort(), USER_FIELDS);
    const local = h.service.deps.readModels.users.byOid(ALICE.oId)!;
    assert.is(user.id, local.id);
    assert.is(user.oId, ALICE.oId);
    assert.is(user.name, ALICE.userName);
    assert.is(user.nickname, ALICE.nickname);
    assert.is(user.avatar, ALICE.avatar);
    assert.is(user.email, '');
    assert.is(user.emailVisibility, false);
    assert.is(user.verified, true);
    assert.is(user.collectionId, '_pb_users_auth_');
    assert.is(user.collectionName, 'users');
    assert.match(user.created, SPEC_TIMESTAMP);
    assert.match(user.updated, SPEC_TIMESTAMP);

    const [signedIn] = await h.events(`client-${clientId}`).then((events) => events.filter((e) => e.type === 'ClientSignedIn'));
    assert.is(login.id, String(signedIn!.position));
    assert.equal(
      (await loginEvents(h)).map((e) => e.type),
      ['LoginClaimed', 'LoginCompleted'],
    );

    const found = await lookup(h, clientId);
    assert.equal(found.body, {
      code: 0,
      msg: 'success',
      data: { authenticated: true, clientId, user: { avatar: ALICE.avatar, name: ALICE.userName, nickname: ALICE.nickname, oId: ALICE.oId } },
    });
    stream.close();
  } finally {
    await h.close();
  }
});

test('the session cookie: HttpOnly, SameSite=Lax, Path=/, 30 days, not Secure over http', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const res = await callback(await platformAssertion(await startLogin(h, clientId), ALICE.oId));
    const [cookie] = res.setCookie;
    assert.match(cookie!, /^cb_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+;/);
    for (const attribute of ['HttpOnly', 'SameSite=Lax', 'Path=/', `Max-Age=${30 * 86_400}`]) assert.ok(cookie!.includes(attribute), attribute);
    assert.not.ok(/Secure/.test(cookie!));
    stream.close();
  } finally {
    await h.close();
  }
});

test('under an https PUBLIC_URL the return_to and realm use it and the cookie is Secure; SESSION_TTL_DAYS sets its age', async () => {
  const h = await startHarness({ env: { PUBLIC_URL: 'https://bridge.example/', SESSION_TTL_DAYS: '2' } });
  try {
    const { stream, clientId } = await connect(h);
    const platformUrl = await startLogin(h, clientId);
    const q = new URL(platformUrl).searchParams;
    assert.is(q.get('openid.realm'), 'https://bridge.example');
    assert.match(q.get('openid.return_to')!, /^https:\/\/bridge\.example\/fishpi\/callback\?state=/);
    // The browser would reach the service through the proxy at PUBLIC_URL; here we go straight to it.
    const viaProxy = new URL(await platformAssertion(platformUrl, ALICE.oId));
    const res = await callback(`${h.url}${viaProxy.pathname}${viaProxy.search}`);
    assert.is(res.status, 200, res.text);
    assert.match(res.setCookie[0]!, /; Secure/);
    assert.match(res.setCookie[0]!, new RegExp(`Max-Age=${2 * 86_400}`));
    await stream.next('login');
    stream.close();
  } finally {
    await h.close();
  }
});

test('COMMUNITY_NAME names the login path', async () => {
  const h = await startHarness({ env: { COMMUNITY_NAME: 'community' } });
  try {
    const { stream, clientId } = await connect(h);
    assert.is((await visit(`${h.url}/fishpi/login?client_id=${clientId}`)).status, 404);
    const platformUrl = await startLogin(h, clientId, 'community');
    assert.match(new URL(platformUrl).searchParams.get('openid.return_to')!, new RegExp(`^${h.url}/community/callback\\?state=`));
    assert.is((await callback(await platformAssertion(platformUrl, ALICE.oId))).status, 200);
    await stream.next('login');
    stream.close();
  } finally {
    await h.close();
  }
});

test('forged assertions answer a 403 page and sign nobody in (sig, op_endpoint, identity, claimed_id, return_to, mode)', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const bobIdentity = `${h.simUrl}/openid/id/${BOB.oId}`;
    const forgeries: Array<[string, (url: string) => string]> = [
      ['tampered signature', (url) => tamper(url, { 'openid.sig': `AAAA${new URL(url).searchParams.get('openid.sig')!.slice(4)}` })],
      ['another user, consistently', (url) => tamper(url, { 'openid.identity': bobIdentity, 'openid.claimed_id': bobIdentity })],
      ['wrong op_endpoint', (url) => tamper(url, { 'openid.op_endpoint': 'https://evil.example/openid' })],
      ['identity differs from claimed_id', (url) => tamper(url, { 'openid.identity': bobIdentity })],
      ['identity of another provider', (url) => tamper(url, { 'openid.identity': 'https://evil.example/openid/id/1', 'openid.claimed_id': 'https://evil.example/openid/id/1' })],
      ['wrong return_to', (url) => tamper(url, { 'openid.return_to': `${h.url}/fishpi/callback?state=x` })],
      ['mode is not id_res', (url) => tamper(url, { 'openid.mode': 'cancel' })],
      ['no assertion at all', (url) => tamper(url, { 'openid.mode': null, 'openid.identity': null, 'openid.sig': null })],
    ];
    for (const [name, forge] of forgeries) {
      const genuine = await platformAssertion(await startLogin(h, clientId), ALICE.oId);
      const res = await callback(forge(genuine));
      assert.is(res.status, 403, name);
      assert.match(res.text, /nobody was signed in/, name);
      assert.is(res.cookie, undefined, name);
    }
    // Only what reached the platform and was refused there is recorded (the forgeries whose
    // fields were consistent); the others were refused before anything was asked or written.
    const failed = (await loginEvents(h)).filter((e) => e.type === 'LoginFailed');
    assert.is(failed.length, 2);
    assert.ok(failed.every((e) => e.data.reason === 'invalid-assertion'));
    assert.equal(
      (await h.events(`client-${clientId}`)).map((e) => e.type),
      ['ClientConnected'],
    );
    assert.is((await lookup(h, clientId)).body.data.authenticated, false);

    // The first frame after PB_CONNECT is the login of a genuine sign-in: the forgeries sent none.
    await signIn(h, clientId, ALICE.oId);
    assert.is((await stream.next('login')).data.user.oId, ALICE.oId);
    stream.close();
  } finally {
    await h.close();
  }
});

test('a replayed callback is refused (409) and signs in nobody a second time', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const url = await platformAssertion(await startLogin(h, clientId), ALICE.oId);
    assert.is((await callback(url)).status, 200);
    await stream.next('login');
    const replay = await callback(url);
    assert.is(replay.status, 409);
    assert.match(replay.text, /already used/);
    assert.is(replay.cookie, undefined);
    const events = await h.events();
    assert.is(events.filter((e) => e.type === 'ClientSignedIn').length, 1);
    assert.is(events.filter((e) => e.type === 'SessionStarted').length, 1);
    stream.close();
  } finally {
    await h.close();
  }
});

test('an expired state (LOGIN_STATE_TTL_MS) answers 410 and signs nobody in', async () => {
  const clock = movableClock();
  const h = await startHarness({ clock, env: { LOGIN_STATE_TTL_MS: '60000' } });
  try {
    const { stream, clientId } = await connect(h);
    const url = await platformAssertion(await startLogin(h, clientId), ALICE.oId);
    clock.advance(61_000);
    const res = await callback(url);
    assert.is(res.status, 410);
    assert.match(res.text, /expired/);
    assert.is(res.cookie, undefined);
    assert.equal(await loginEvents(h), [], 'refused before the platform was asked: nothing recorded');
    assert.is((await lookup(h, clientId)).body.data.authenticated, false);
    stream.close();
  } finally {
    await h.close();
  }
});

test('a sign-in cancelled on the platform (error=) answers a cancelled page and signs nobody in', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const q = new URL(await startLogin(h, clientId)).searchParams;
    // The consent page's cancel button.
    const cancel = await fetch(`${h.simUrl}/openid/login/confirm`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'User-Agent': 'tests', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ return_to: q.get('openid.return_to')!, realm: q.get('openid.realm')!, cancel: '1' }),
    });
    const back = cancel.headers.get('location')!;
    assert.match(back, /error=cancelled/);
    const res = await callback(back);
    assert.is(res.status, 400);
    assert.match(res.text, /Sign-in cancelled/);
    assert.is(res.cookie, undefined);
    assert.equal(await loginEvents(h), [], 'nothing recorded');
    assert.is((await lookup(h, clientId)).body.data.authenticated, false);
    stream.close();
  } finally {
    await h.close();
  }
});

test('a platform that cannot verify answers a 502 page and leaves the state open: the same callback works once it is back', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const url = await platformAssertion(await startLogin(h, clientId), ALICE.oId);
    h.sim.failNext(1, 'http500');
    const down = await callback(url);
    assert.is(down.status, 502);
    assert.match(down.text, /could not be reached/);
    assert.is(down.cookie, undefined);
    // Claimed while the platform was asked, released when it did not answer: the state is still good.
    assert.equal(
      (await loginEvents(h)).map((e) => e.type),
      ['LoginClaimed', 'LoginReleased'],
    );
    const again = await callback(url);
    assert.is(again.status, 200, again.text);
    await stream.next('login');
    stream.close();
  } finally {
    await h.close();
  }
});

test('an unknown or malformed state answers a 400 page', async () => {
  const h = await startHarness();
  try {
    for (const query of ['', '?state=short', `?state=${'a'.repeat(43)}`, `?state=${'a'.repeat(43)}&state=${'b'.repeat(43)}`]) {
      const res = await visit(`${h.url}/fishpi/callback${query}`);
      assert.is(res.status, 400, query);
      assert.match(res.text, /not recognised/);
    }
  } finally {
    await h.close();
  }
});

test('a connection that closed before the callback: the sign-in still starts a session, nothing is bound', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const url = await platformAssertion(await startLogin(h, clientId), ALICE.oId);
    const gone = applied(h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === clientId);
    stream.close();
    await gone;
    const res = await callback(url);
    assert.is(res.status, 200);
    assert.match(res.text, /signed in when it reconnects/);
    assert.ok(res.cookie);
    assert.equal(
      (await h.events(`client-${clientId}`)).map((e) => e.type),
      ['ClientConnected', 'ClientDisconnected'],
    );
    const again = await connect(h, { cookie: res.cookie });
    assert.is(again.hello.data.login_status, true);
    again.stream.close();
  } finally {
    await h.close();
  }
});

test.run();
