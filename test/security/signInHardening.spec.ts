// The smaller holes around sign-in, each written as the attack: a logout forged from another
// site, one assertion delivered several times at once (on one node and on two), and HTML pages
// that could be framed, sniffed or leak their URL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/main.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { callback, connect, platformAssertion, signIn, startLogin, visit } from '../support/streamsAndSignIn.js';

const GAME = 'https://game.example';

async function loginEvents(h: Harness) {
  return (await h.events('login-')).map((e) => e.type);
}

test('logout forged by a page on another site is refused (403) and the session lives on', async () => {
  const h = await startHarness({ env: { CORS_ORIGINS: GAME } });
  const streams: Array<{ close(): void }> = [];
  const connected = async (options: Parameters<typeof connect>[1] = {}) => {
    const client = await connect(h, options);
    streams.push(client.stream);
    return client;
  };
  try {
    const { clientId } = await connected();
    const cookie = await signIn(h, clientId, ALICE.oId);
    const logout = (origin?: string) => h.request('POST', '/api/logout', { headers: { Cookie: cookie, ...(origin !== undefined && { Origin: origin }) } });
    for (const origin of ['https://evil.example', 'null', `${GAME}.evil.example`, h.url.replace('127.0.0.1', 'localhost')]) {
      const res = await logout(origin);
      assert.is(res.status, 403, origin);
      assert.is(res.body.code, 403);
      assert.equal(res.headers.getSetCookie(), [], 'the cookie is not cleared');
    }
    assert.is((await connected({ cookie })).hello.data.login_status, true, 'still signed in');
    assert.is(h.service.deps.readModels.sessions.get(cookie.split('=')[1]!.split('.')[0]!)?.oId, ALICE.oId);

    // The game's page (CORS_ORIGINS), the service's own pages, and a client that is no browser.
    for (const origin of [GAME, h.url, undefined]) {
      const again = await signIn(h, (await connected()).clientId, ALICE.oId);
      const res = await h.request('POST', '/api/logout', { headers: { Cookie: again, ...(origin && { Origin: origin }) } });
      assert.is(res.status, 200, origin);
    }
  } finally {
    for (const stream of streams) stream.close();
    await h.close();
  }
});

test('one assertion delivered five times at once signs in exactly once; the others are told it is already used', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const url = await platformAssertion(await startLogin(h, clientId), ALICE.oId);
    const results = await Promise.all(Array.from({ length: 5 }, () => callback(url)));
    const statuses = results.map((r) => r.status).sort();
    assert.equal(statuses, [200, 409, 409, 409, 409]);
    for (const refused of results.filter((r) => r.status === 409)) {
      assert.match(refused.text, /already used/);
      assert.is(refused.cookie, undefined);
    }
    assert.is(h.sim.calls('/openid/verify'), 1, 'only the delivery that claimed the attempt asked the platform');
    assert.equal(await loginEvents(h), ['LoginClaimed', 'LoginCompleted']);
    const events = await h.events();
    assert.is(events.filter((e) => e.type === 'ClientSignedIn').length, 1);
    assert.is(events.filter((e) => e.type === 'SessionStarted').length, 1);
    assert.is((await stream.next('login')).data.user.oId, ALICE.oId);
    stream.close();
  } finally {
    await h.close();
  }
});

test('one assertion delivered to two nodes at once signs in exactly once', async () => {
  const a = await startHarness();
  const b = await startService(loadConfig({ PORT: '0', DATA_DIR: a.dataDir, COMMUNITY_URL: a.simUrl, COMMUNITY_KEY: SIMULATOR_KEY, LOG_LEVEL: 'silent', NODE_ID: 'node-b' }));
  try {
    const { stream, clientId } = await connect(a);
    const url = await platformAssertion(await startLogin(a, clientId), ALICE.oId);
    const onB = url.replace(a.url, b.url);
    const results = await Promise.all([callback(url), callback(onB), callback(url), callback(onB)]);
    assert.equal(results.map((r) => r.status).sort(), [200, 409, 409, 409]);
    assert.is(a.sim.calls('/openid/verify'), 1);
    assert.equal(await loginEvents(a), ['LoginClaimed', 'LoginCompleted']);
    assert.is((await stream.next('login')).data.user.oId, ALICE.oId);
    stream.close();
  } finally {
    await b.close();
    await a.close();
  }
});

test('every HTML page forbids framing, sniffing and referrers, and allows only what it loads', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId, binding } = await connect(h);
    const genuine = await platformAssertion(await startLogin(h, clientId), ALICE.oId);
    const pages: Array<[string, Awaited<ReturnType<typeof visit>>]> = [
      ['login page, no client_id', await visit(`${h.url}/fishpi/login`)],
      ['login page, unknown client', await visit(`${h.url}/fishpi/login?client_id=${'A'.repeat(32)}`)],
      ['login page, confirmation', await visit(`${h.url}/fishpi/login?client_id=${clientId}`)],
      ['login page, redirect', await visit(`${h.url}/fishpi/login?client_id=${clientId}`, { Cookie: binding! })],
      ['callback, unknown state', await visit(`${h.url}/fishpi/callback?state=${'a'.repeat(43)}`)],
      ['callback, success', await callback(genuine)],
      ['callback, used', await callback(genuine)],
      ['docs', await visit(`${h.url}/docs`)],
    ];
    assert.is(pages[3]![1].status, 302);
    for (const [name, res] of pages) {
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /(^|; )default-src 'none'(;|$)/, name);
      assert.match(csp, /(^|; )frame-ancestors 'none'(;|$)/, name);
      assert.match(csp, /(^|; )base-uri 'none'(;|$)/, name);
      assert.not.match(csp, /unsafe-eval/, name);
      assert.is(res.headers.get('x-content-type-options'), 'nosniff', name);
      assert.is(res.headers.get('referrer-policy'), 'no-referrer', name);
      assert.is(res.headers.get('x-frame-options'), 'DENY', name);
    }
    // The sign-in pages run one inline script, allowed by its hash, and no inline handler.
    const signInCsp = pages[5]![1].headers.get('content-security-policy')!;
    assert.match(signInCsp, /script-src 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
    assert.not.match(signInCsp, /unsafe-inline/);
    assert.not.match(pages[5]![1].text, /\son[a-z]+=/);
    // JSON answers are not sniffed either.
    assert.is((await h.get('/adm/vip/1')).headers.get('x-content-type-options'), 'nosniff');
    stream.close();
  } finally {
    await h.close();
  }
});

test.run();
