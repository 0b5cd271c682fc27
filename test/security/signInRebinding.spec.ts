// Attacks on sign-in that need no forgery: rebinding a signed-in connection by clicking through
// the confirmation with its client_id, and flooding login pages to fill the log. A connection
// bound to a user is signed in again only by the browser holding it; a login page records nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { callback, connect, platformAssertion, signIn, startLogin, visit } from '../support/streamsAndSignIn.js';

const userOf = async (h: Harness, clientId: string, key: string) => (await h.get(`/adm/user/get?client_id=${clientId}`, key)).body.data;

test('a signed-in connection cannot be signed over to another account by whoever holds its client_id', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['user:get']);
    const victim = await connect(h);
    // The attacker opened the login page for the victim's client while it was not signed in yet
    // (the confirmation page), and kept the platform URL.
    const early = await visit(`${h.url}/fishpi/login?client_id=${victim.clientId}`);
    assert.is(early.status, 200, 'a confirmation, for an unbound client');
    const continueTo = /<a class="button" id="continue" href="([^"]+)">/.exec(early.text)![1]!.replaceAll('&amp;', '&');
    const attackerCookie = early.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .join('; ');
    await signIn(h, victim.clientId, ALICE.oId);
    await victim.stream.next('login');

    // After the sign-in: no confirmation page any more for another browser.
    const late = await visit(`${h.url}/fishpi/login?client_id=${victim.clientId}`);
    assert.is(late.status, 409, late.text);
    assert.match(late.text, /signed in already/);
    assert.not.match(late.text, /id="continue"/);

    // The state the attacker got before: its callback, in the attacker's browser, is refused.
    const hijack = await callback(await platformAssertion(continueTo, BOB.oId), { cookieHeader: attackerCookie });
    assert.is(hijack.status, 409, hijack.text);
    assert.is(hijack.cookie, undefined);
    assert.equal((await userOf(h, victim.clientId, key)).user?.oId, ALICE.oId, 'still the victim');

    // The browser holding the connection may sign it in again, as another account.
    await signIn(h, victim.clientId, BOB.oId);
    assert.is((await victim.stream.next('login')).data.user.oId, BOB.oId);
    assert.equal((await userOf(h, victim.clientId, key)).user?.oId, BOB.oId);
    victim.stream.close();
  } finally {
    await h.close();
  }
});

test('a flood of login pages records nothing', async () => {
  // Every page served (no bound per address or node): none of them records anything.
  const h = await startHarness({ env: { SIGN_IN_PAGES_PER_SECOND: '0', SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0' } });
  try {
    const { stream, clientId, binding } = await connect(h);
    const head = await h.service.deps.store.headPosition();
    await Promise.all(
      Array.from({ length: 400 }, async (_, i) => {
        const res = await visit(`${h.url}/fishpi/login?client_id=${clientId}`, i % 2 ? { Cookie: binding! } : {});
        assert.ok([200, 302].includes(res.status), String(res.status));
      }),
    );
    assert.is(await h.service.deps.store.headPosition(), head, 'the log did not move');
    // Each of those pages would still sign in: the state is in the browser, signed.
    assert.is((await callback(await platformAssertion(await startLogin(h, clientId), ALICE.oId))).status, 200);
    stream.close();
  } finally {
    await h.close();
  }
});

test.run();
