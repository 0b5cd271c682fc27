// The attack "sign in as anyone", as an attacker runs it: a genuine assertion for their own
// account (bob), bent to claim the victim (alice). The simulator verifies signatures the way the
// platform does (over the `key:value` lines `openid.signed` names), so the bent assertion is one
// the platform itself calls genuine: only the service's own checks stand in the way.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { callback, connect, platformAssertion, startLogin, tamper } from '../support/streamsAndSignIn.js';
import { claimIdentity, openIdFields, unsign } from './signInForge.js';

const REQUIRED_SIGNED = ['op_endpoint', 'return_to', 'response_nonce', 'assoc_handle', 'claimed_id', 'identity'];

/** The attacker's own sign-in, up to the callback URL the platform hands back. */
async function attackersAssertion(h: Harness, clientId: string) {
  return platformAssertion(await startLogin(h, clientId), BOB.oId);
}

/** Nobody was signed in, no session exists, and the refusal says nothing about the forgery. */
async function assertNobodySignedIn(h: Harness, clientId: string, res: Awaited<ReturnType<typeof callback>>, what: string) {
  assert.is(res.status, 403, what);
  assert.match(res.headers.get('content-type')!, /^text\/html/, what);
  assert.match(res.text, /nobody was signed in/, what);
  assert.is(res.cookie, undefined, what);
  for (const leak of [ALICE.oId, ALICE.userName, ALICE.nickname, 'openid', 'claimed_id', 'newline']) assert.not.ok(res.text.includes(leak), `${what}: the page shows ${leak}`);
  const events = await h.events();
  assert.is(events.filter((e) => e.type === 'ClientSignedIn' || e.type === 'SessionStarted').length, 0, what);
  const { key } = await h.key(['user:get']);
  assert.is((await h.get(`/adm/user/get?client_id=${clientId}`, key)).body.data.authenticated, false, what);
}

test('sign in as anyone: an own assertion bent through a newline in a parameter name is refused before the platform is asked', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const victim = `${h.simUrl}/openid/id/${ALICE.oId}`;

    // The platform itself accepts the bent text: the forgery is real.
    const probe = openIdFields(claimIdentity(await attackersAssertion(h, clientId), victim));
    const answer = await fetch(`${h.simUrl}/openid/verify`, {
      method: 'POST',
      headers: { 'User-Agent': 'attacker', 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...probe, 'openid.mode': 'check_authentication' }),
    });
    assert.match(await answer.text(), /is_valid:true/);

    const verifiesBefore = h.sim.calls('/openid/verify');
    const res = await callback(claimIdentity(await attackersAssertion(h, clientId), victim));
    await assertNobodySignedIn(h, clientId, res, 'newline in a name');
    assert.is(h.sim.calls('/openid/verify'), verifiesBefore, 'the forgery never reached the platform');
    assert.is(stream.frames.length, 1, 'no login frame');
    stream.close();
  } finally {
    await h.close();
  }
});

test('the bent signed list: leaving any of the six fields out of openid.signed is refused', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const verifiesBefore = h.sim.calls('/openid/verify');
    for (const field of REQUIRED_SIGNED) {
      await assertNobodySignedIn(h, clientId, await callback(unsign(await attackersAssertion(h, clientId), [field])), `unsigned ${field}`);
    }
    const both = unsign(await attackersAssertion(h, clientId), ['claimed_id', 'identity']);
    const victim = `${h.simUrl}/openid/id/${ALICE.oId}`;
    await assertNobodySignedIn(h, clientId, await callback(tamper(both, { 'openid.claimed_id': victim, 'openid.identity': victim })), 'unsigned identity, set to the victim');
    assert.is(h.sim.calls('/openid/verify'), verifiesBefore);
    stream.close();
  } finally {
    await h.close();
  }
});

test('openid parameters whose name is not a protocol field name, or whose value holds a newline, are refused', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const verifiesBefore = h.sim.calls('/openid/verify');
    const extras: Record<string, string>[] = [
      { 'openid.x\ny': 'v' },
      { 'openid.x\r\ny': 'v' },
      { 'openid.x:y': 'v' },
      { 'openid.': 'v' },
      { 'openid.a..b': 'v' },
      { 'openid.a,b': 'v' },
      { 'openid.a b': 'v' },
      { 'openid.ns.ext': 'a\nb' },
      { 'openid.assoc_handle': 'handle\nclaimed_id:x' },
    ];
    for (const extra of extras) {
      await assertNobodySignedIn(h, clientId, await callback(tamper(await attackersAssertion(h, clientId), extra)), JSON.stringify(extra));
    }
    assert.is(h.sim.calls('/openid/verify'), verifiesBefore);
    stream.close();
  } finally {
    await h.close();
  }
});

test('the verify call carries exactly the openid fields received, extensions included, with mode check_authentication', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const url = tamper(await attackersAssertion(h, clientId), {
      'openid.ns.sreg': 'http://openid.net/extensions/sreg/1.1',
      'openid.sreg.nickname': 'bob',
      unrelated: 'not forwarded',
    });
    const res = await callback(url);
    assert.is(res.status, 200, res.text);
    assert.equal(h.sim.verifyRequests().at(-1), { ...openIdFields(url), 'openid.mode': 'check_authentication' });
    assert.is((await stream.next('login')).data.user.oId, BOB.oId);
    stream.close();
  } finally {
    await h.close();
  }
});

test.run();
