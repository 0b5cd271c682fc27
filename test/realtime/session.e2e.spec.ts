// docs/api.md "GET /api/realtime": "a connection opened by a visitor with an existing login starts in the logged-in
// state", and logout: sessions are events, so they hold across restarts and nodes.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';

test('a returning visitor with the session cookie starts signed in: PB_CONNECT carries the user', async () => {
  const h = await startHarness();
  try {
    const first = await connect(h);
    const cookie = await signIn(h, first.clientId, ALICE.oId);
    const login = await first.stream.next('login');

    const again = await connect(h, { cookie });
    assert.is(again.hello.data.login_status, true);
    assert.equal(again.hello.data.user, login.data.user);
    assert.equal(Object.keys(again.hello.data).sort(), ['client_id', 'login_status', 'user']);
    const [connected] = await h.events(`client-${again.clientId}`);
    assert.is((connected!.data as { session: { oId: string } }).session.oId, ALICE.oId);
    const { key } = await h.key(['user:get']);
    const found = await h.get(`/adm/user/get?client_id=${again.clientId}`, key);
    assert.is(found.body.data.authenticated, true);
    assert.is(found.body.data.user.oId, ALICE.oId);

    // It survives a restart: the session is in the log, the cookie's secret in DATA_DIR.
    first.stream.close();
    again.stream.close();
    await h.restart();
    const afterRestart = await connect(h, { cookie });
    assert.is(afterRestart.hello.data.login_status, true);
    afterRestart.stream.close();
  } finally {
    await h.close();
  }
});

test('a user’s streams on a node share the user while it is the same; a profile changed since shows in the next stream', async () => {
  const h = await startHarness();
  try {
    const first = await connect(h);
    const cookie = await signIn(h, first.clientId, ALICE.oId);
    const login = await first.stream.next('login');
    const second = await connect(h, { cookie });
    assert.equal(second.hello.data.user, login.data.user);

    // The platform's profile changed; a new sign-in records it while the first stream is open.
    h.sim.updateUser(ALICE.oId, { nickname: 'Alice B.' });
    const third = await connect(h);
    await signIn(h, third.clientId, ALICE.oId);
    const relogin = await third.stream.next('login');
    assert.is(relogin.data.user.nickname, 'Alice B.');
    const fourth = await connect(h, { cookie });
    assert.is(fourth.hello.data.user?.nickname, 'Alice B.');
    assert.is(fourth.hello.data.user?.updated, relogin.data.user.updated);
    for (const s of [first, second, third, fourth]) s.stream.close();
  } finally {
    await h.close();
  }
});

test('a cookie with a wrong signature, or an unknown session, is ignored: the client starts anonymous', async () => {
  const h = await startHarness();
  try {
    const first = await connect(h);
    const cookie = await signIn(h, first.clientId, ALICE.oId);
    const [id, signature] = cookie.slice('cb_session='.length).split('.');
    for (const forged of [`cb_session=${id}.${signature!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`, `cb_session=${id}`, `cb_session=garbage`, 'other=1']) {
      const { stream, hello } = await connect(h, { cookie: forged });
      assert.is(hello.data.login_status, false, forged);
      stream.close();
    }
    first.stream.close();
  } finally {
    await h.close();
  }
});

test('without SESSION_SECRET the secret is generated once into DATA_DIR/session-secret, readable by the owner only', async () => {
  const h = await startHarness();
  try {
    const mode = statSync(join(h.dataDir, 'session-secret')).mode & 0o777;
    assert.is(mode, 0o600);
  } finally {
    await h.close();
  }
});

test('a session past SESSION_TTL_DAYS no longer signs a connection in', async () => {
  const clock = movableClock();
  const h = await startHarness({ clock, env: { SESSION_TTL_DAYS: '1' } });
  try {
    const first = await connect(h);
    const cookie = await signIn(h, first.clientId, ALICE.oId);
    clock.advance(86_400_000 - 60_000);
    const before = await connect(h, { cookie });
    assert.is(before.hello.data.login_status, true);
    clock.advance(120_000);
    const after = await connect(h, { cookie });
    assert.is(after.hello.data.login_status, false);
    for (const s of [first, before, after]) s.stream.close();
  } finally {
    await h.close();
  }
});

test('logout ends the session: its connections close, the cookie is cleared, the next connection is anonymous', async () => {
  const h = await startHarness();
  try {
    const popup = await connect(h);
    const cookie = await signIn(h, popup.clientId, ALICE.oId);
    await popup.stream.next('login');
    const tab = await connect(h, { cookie });
    const stranger = await connect(h);

    const res = await h.request('POST', '/api/logout', { headers: { Cookie: cookie } });
    assert.is(res.status, 200);
    assert.equal(res.body, { code: 0, msg: 'success' });
    const cleared = res.headers.getSetCookie()[0]!;
    assert.match(cleared, /^cb_session=;/);
    assert.match(cleared, /Max-Age=0/);

    // Both connections bound to the session end (the browser reconnects, signed out).
    await popup.stream.ended();
    await tab.stream.ended();
    popup.stream.close(); // no automatic reconnect during the rest of the test
    tab.stream.close();
    assert.equal(
      (await h.events('session-')).map((e) => e.type),
      ['SessionStarted', 'SessionEnded'],
    );
    const after = await connect(h, { cookie });
    assert.is(after.hello.data.login_status, false);
    const { key } = await h.key(['user:get']);
    assert.is((await h.get(`/adm/user/get?client_id=${popup.clientId}`, key)).status, 404);

    // Logging out again, or without a session, is fine and records nothing more.
    assert.is((await h.request('POST', '/api/logout', { headers: { Cookie: cookie } })).status, 200);
    assert.is((await h.request('POST', '/api/logout')).status, 200);
    assert.is((await h.events('session-')).length, 2);
    // A connection of nobody's session is untouched.
    assert.is(h.service.deps.realtime.hub.size, 2);
    for (const s of [stranger, after]) s.stream.close();
  } finally {
    await h.close();
  }
});

test.run();
