// Idempotency-Key on writes (README, Operating), through real HTTP against the simulator: the
// same key answers the first answer and calls the platform once, a changed body or another app's
// request is told apart, a key still running answers 409; with the platform source fields on, the
// key is the request id the platform sees.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { startFaultProxy } from '../support/faultProxy.js';
import { ALICE, BOB, startHarness, type Harness, withHarness } from '../support/harness.js';

const POINTS = '/adm/points/edit';
const pointsCalls = (h: Harness) => h.sim.calls('/user/edit/points');

function postWithKey(h: Harness, apiKey: string, idempotencyKey: string, body: unknown) {
  return h.request('POST', POINTS, { body, apiKey, headers: { 'Idempotency-Key': idempotencyKey } });
}

test('the same Idempotency-Key with the same body answers the first answer and calls the platform once, even after a restart', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    const body = { oId: ALICE.oId, point: 7, memo: 'quest reward' };
    const first = await postWithKey(h, key, 'reward-1', body);
    assert.is(first.status, 200, first.text);
    assert.is(first.headers.get('idempotent-replayed'), null);
    // Key order in the body does not make it another request.
    const again = await postWithKey(h, key, 'reward-1', { memo: 'quest reward', point: 7, oId: ALICE.oId });
    assert.is(again.status, 200);
    assert.equal(again.body, first.body);
    assert.is(again.headers.get('idempotent-replayed'), 'true');
    assert.is(pointsCalls(h), 1);
    assert.is(h.sim.user(ALICE.oId)!.points, 107);

    await h.restart();
    const afterRestart = await postWithKey(h, key, 'reward-1', body);
    assert.equal(afterRestart.body, first.body);
    assert.is(pointsCalls(h), 1, 'the platform is not called again after a restart');
  }));

test('the same Idempotency-Key with a different body answers 422', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    await postWithKey(h, key, 'reward-2', { oId: ALICE.oId, point: 7, memo: 'quest reward' });
    const other = await postWithKey(h, key, 'reward-2', { oId: ALICE.oId, point: 8, memo: 'quest reward' });
    assert.is(other.status, 422);
    assert.is(other.body.code, 422);
    assert.match(other.body.message, /^Idempotency-Key: already used with a different request/);
    assert.is(pointsCalls(h), 1);
  }));

test('Idempotency-Keys belong to one app: another app may use the same key', () =>
  withHarness({}, async (h) => {
    const one = await h.key(['*'], 'game-one');
    const two = await h.key(['*'], 'game-two');
    const body = { oId: BOB.oId, point: 1, memo: 'hello' };
    assert.is((await postWithKey(h, one.key, 'same', body)).status, 200);
    const second = await postWithKey(h, two.key, 'same', body);
    assert.is(second.status, 200);
    assert.is(second.headers.get('idempotent-replayed'), null);
    assert.is(pointsCalls(h), 2);
  }));

test('an answer given before anything ran (invalid body) is not kept: the corrected request may reuse the key', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    const bad = await postWithKey(h, key, 'fix-me', { oId: ALICE.oId, point: 1.5, memo: 'x' });
    assert.is(bad.status, 400);
    const good = await postWithKey(h, key, 'fix-me', { oId: ALICE.oId, point: 2, memo: 'x' });
    assert.is(good.status, 200, good.text);
  }));

test('a points edit that timed out is kept under the key, so a retry cannot apply the points twice', async () => {
  const proxy = await startFaultProxy();
  const h = await startHarness({ env: { COMMUNITY_URL: proxy.url, COMMUNITY_TIMEOUT_MS: '300' } });
  proxy.target = h.simUrl;
  try {
    const { key } = await h.key();
    proxy.failNext('/user/edit/points', { kind: 'delay', ms: 600 });
    const body = { oId: ALICE.oId, point: 5, memo: 'slow' };
    const first = await postWithKey(h, key, 'slow', body);
    assert.is(first.status, 504);
    const retry = await postWithKey(h, key, 'slow', body);
    assert.is(retry.status, 504);
    assert.is(retry.headers.get('idempotent-replayed'), 'true');
    assert.is(proxy.calls('/user/edit/points'), 1);
  } finally {
    await h.close();
    await proxy.close();
  }
});

test('a timeout of the user lookup changed nothing: a retry with the same key runs', () =>
  withHarness({ COMMUNITY_TIMEOUT_MS: '300' }, async (h) => {
    const { key } = await h.key();
    const body = { oId: ALICE.oId, point: 5, memo: 'lookup was slow' };
    h.sim.setDelay(600);
    assert.is((await postWithKey(h, key, 'lookup', body)).status, 504);
    h.sim.setDelay(0);
    const retry = await postWithKey(h, key, 'lookup', body);
    assert.is(retry.status, 200, retry.text);
    assert.is(retry.headers.get('idempotent-replayed'), null);
  }));

test('a second request with a key still being processed answers 409 and does not run', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    h.sim.setDelay(400);
    const body = { oId: ALICE.oId, point: 3, memo: 'race' };
    const firstPromise = postWithKey(h, key, 'race', body);
    await eventually(async () => (await h.events('idempotency-')).some((e) => e.type === 'IdempotentRequestStarted'), 'the first request to claim its key');
    const second = await postWithKey(h, key, 'race', body);
    const first = await firstPromise;
    assert.is(first.status, 200, first.text);
    assert.is(second.status, 409);
    assert.match(second.body.message, /still being processed/);
    assert.is(h.sim.user(ALICE.oId)!.ledger.filter((e) => e.memo === 'race').length, 1);
  }));

test('a malformed Idempotency-Key answers 400 naming the header', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    const res = await postWithKey(h, key, 'x'.repeat(256), { oId: ALICE.oId, point: 1, memo: 'x' });
    assert.is(res.status, 400);
    assert.match(res.body.message, /^Idempotency-Key: /);
  }));

test('with the platform source fields on, a points edit carries the app and an end-to-end request id', () =>
  withHarness({ COMMUNITY_POINTS_SOURCE: 'true' }, async (h) => {
    const { key } = await h.key(['*'], 'Game One');
    assert.is((await postWithKey(h, key, 'order-42', { oId: ALICE.oId, point: 9, memo: 'purchase' })).status, 200);
    assert.is((await h.post(POINTS, { oId: ALICE.oId, point: -4, memo: 'spend' }, key)).status, 200);
    const [withKey, withoutKey] = h.sim.user(ALICE.oId)!.ledger.slice(-2);
    assert.is(withKey!.source!.sourceAppId, 'game-one');
    assert.is(withKey!.source!.sourceAppName, 'Game One');
    assert.is(withKey!.source!.sourceScene, 'point_issue');
    assert.match(withKey!.source!.requestId, /^game-one:[0-9a-f]{40}$/);
    assert.is(withoutKey!.source!.sourceScene, 'payment');
    assert.match(withoutKey!.source!.requestId, /^[a-z0-9]{15}$/, 'the operation id when no key was sent');
  }));

test('without the setting, no source fields are sent (older platform builds)', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    await h.post(POINTS, { oId: ALICE.oId, point: 1, memo: 'plain' }, key);
    assert.is(h.sim.user(ALICE.oId)!.ledger.at(-1)!.source, undefined);
  }));

test.run();
