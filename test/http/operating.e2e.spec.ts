// Idempotent writes and running it (README, Operating): Idempotency-Key, rate limits, health,
// readiness and metrics, through real HTTP against the simulator.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
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
    await new Promise((r) => setTimeout(r, 150));
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

test('a key over its rate limit gets 429 with Retry-After; other keys are not affected', () =>
  withHarness({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2' }, async (h) => {
    const busy = await h.key();
    const calm = await h.key();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await h.get(`/adm/vip/${ALICE.oId}`, busy.key)).status);
    assert.equal(statuses, [200, 200, 429]);
    const limited = await h.get(`/adm/vip/${ALICE.oId}`, busy.key);
    assert.is(limited.body.code, 429);
    assert.match(limited.body.message, /limited to 1 per second/);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.is((await h.get(`/adm/vip/${ALICE.oId}`, calm.key)).status, 200);
  }));

test('no rate limit by default', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    for (let i = 0; i < 20; i++) assert.is((await h.get(`/adm/vip/${ALICE.oId}`, key)).status, 200);
  }));

test('/healthz answers while the process lives; /readyz once the read models have caught up with the store', () =>
  withHarness({}, async (h) => {
    const health = await h.get('/healthz');
    assert.is(health.status, 200);
    assert.equal(health.body, { status: 'ok' });
    const { key } = await h.key();
    await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, key);
    const ready = await h.get('/readyz');
    assert.is(ready.status, 200);
    assert.is(ready.body.status, 'ready');
    assert.is(ready.body.position, (await h.events()).at(-1)!.position);
  }));

test('/readyz answers 503 when the store is gone', () =>
  withHarness({}, async (h) => {
    await h.service.deps.store.close();
    const res = await h.get('/readyz');
    assert.is(res.status, 503);
    assert.is(res.body.status, 'not ready');
  }));

test('/metrics has request counts and durations by route and status, platform calls by endpoint and outcome, appends and lag', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    await h.post(POINTS, { oId: ALICE.oId, point: 1, memo: 'm' }, key);
    await h.get(`/adm/vip/${ALICE.oId}`, key);
    await h.post(POINTS, { oId: '9999999999999', point: 1, memo: 'm' }, key);
    const res = await h.get('/metrics');
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/plain/);
    const text = res.text;
    assert.match(text, /http_requests_total\{method="POST",route="\/adm\/points\/edit",status="200"\} 1/);
    assert.match(text, /http_requests_total\{method="GET",route="\/adm\/vip\/:oId",status="200"\} 1/);
    assert.match(text, /http_requests_total\{method="POST",route="\/adm\/points\/edit",status="404"\} 1/);
    assert.match(text, /http_request_duration_seconds_bucket\{le="0\.005",method="POST",route="\/adm\/points\/edit",status="200"\}/);
    assert.match(text, /platform_calls_total\{endpoint="editPoints",outcome="ok"\} 1/);
    assert.match(text, /platform_calls_total\{endpoint="getUser",outcome="ok"\} \d+/);
    assert.match(text, /platform_call_duration_seconds_count\{endpoint="editPoints",outcome="ok"\} 1/);
    assert.match(text, /events_appended_total \d+/);
    assert.match(text, /projection_lag_events 0/);
    assert.match(text, /sse_connections_open 0/);
    assert.not.match(text, new RegExp(key), 'no key in metrics');

    const stream = new AbortController();
    const sse = await fetch(`${h.url}/api/realtime`, { signal: stream.signal });
    const reader = sse.body!.getReader();
    await reader.read(); // PB_CONNECT
    assert.match((await h.get('/metrics')).text, /sse_connections_open 1/);
    stream.abort();
    await reader.cancel().catch(() => undefined);
  }));

test.run();
