// Running it (README, Operating): per-key rate limits, /healthz, /readyz and /metrics, through
// real HTTP against the simulator.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { capturedLog } from '../support/capturedLog.js';
import { ALICE, startHarness, withHarness } from '../support/harness.js';

const POINTS = '/adm/points/edit';

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
    assert.equal(ready.body, { status: 'ready' }, 'anonymous callers learn only that');
    const operator = await h.key(['audit:read'], 'ops', { allApps: true });
    const told = await h.get('/readyz', operator.key);
    assert.is(told.body.status, 'ready');
    assert.is(told.body.position, (await h.events()).at(-1)!.position, "an operator's key also gets the position");
    assert.equal((await h.get('/readyz', key)).body, { status: 'ready' }, "an app's own key is no operator's");
  }));

test('/readyz answers 503 when the store is gone: a reason code to anyone, the detail to an operator and to the log', async () => {
  const { log, lines } = capturedLog('info');
  const h = await startHarness({ log });
  try {
    const operator = await h.key(['audit:read'], 'ops', { allApps: true });
    await h.service.deps.store.close();
    const res = await h.get('/readyz');
    assert.is(res.status, 503);
    assert.equal(res.body, { status: 'not ready', reason: 'store_unreachable' });
    const told = await h.get('/readyz', operator.key);
    assert.is(told.body.reason, 'store_unreachable');
    assert.type(told.body.detail, 'string');
    await h.get('/readyz');
    const logged = lines().filter((line) => line.msg === 'not ready');
    assert.equal(
      logged.map((line) => [line.reason, line.detail]),
      [['store_unreachable', told.body.detail]],
      'logged once, however often it is asked',
    );
  } finally {
    await h.close().catch(() => undefined);
  }
});

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
