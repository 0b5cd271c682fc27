// Each error class of the SDK, provoked against a real service and platform simulator: the class
// says how to handle the failure, `reason` is the service's `data.reason` (or the client's own
// when no answer came), and `requestId` is the X-Request-Id the call sent, the same on every
// attempt, so the service's log can be searched for it even when no answer came.
import {
  AuthError,
  BridgeError,
  ConnectionError,
  OutcomeUnknownError,
  PermissionError,
  PlatformError,
  RateLimitError,
  ValidationError,
  createAdminClient,
  type Fetch,
} from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness, withHarness, type Harness } from '../support/harness.js';
import { rejects } from '../support/rejects.js';

const POINTS_PATH = '/user/edit/points';

interface Sent {
  requestId: string | undefined;
  idempotencyKey: string | undefined;
}

/** The global fetch, recording what it sent. */
function recordingFetch() {
  const sent: Sent[] = [];
  const doFetch: Fetch = (url, init) => {
    sent.push({ requestId: init.headers['X-Request-Id'], idempotencyKey: init.headers['Idempotency-Key'] });
    return fetch(url, init);
  };
  return { fetch: doFetch, sent };
}

/** One X-Request-Id for every attempt of the call, and the error names it. */
function assertOneRequestId(sent: Sent[], error: BridgeError): void {
  assert.ok(sent.length > 0, 'something was sent');
  assert.equal(new Set(sent.map((s) => s.requestId)).size, 1, 'one X-Request-Id for all attempts');
  assert.match(sent[0]!.requestId!, /^[0-9a-f-]{36}$/);
  assert.is(error.requestId, sent[0]!.requestId);
}

const edit = (memo: string) => ({ oId: ALICE.oId, point: 1, memo });

test('401: AuthError, 403: PermissionError, 400: ValidationError with every issue', () =>
  withHarness({}, async (h) => {
    const recorder = recordingFetch();
    const unknown = createAdminClient({ baseUrl: h.url, apiKey: `cbk_${'0'.repeat(27)}`, fetch: recorder.fetch });
    const auth = await rejects(unknown.vip.get(ALICE.oId), AuthError);
    assert.equal([auth.status, auth.message, auth.reason], [401, 'Invalid apiKey', undefined]);
    assertOneRequestId(recorder.sent, auth);

    const { key: readOnly } = await h.key(['vip:read']);
    const denied = await rejects(createAdminClient({ baseUrl: h.url, apiKey: readOnly }).points.edit(edit('no')), PermissionError);
    assert.equal([denied.status, denied.message], [403, 'No permission to access this resource']);
    assert.type(denied.requestId, 'string');

    const { key } = await h.key(['*']);
    const invalid = await rejects(createAdminClient({ baseUrl: h.url, apiKey: key }).points.edit({ oId: 'alice', point: 0, memo: '' }), ValidationError);
    assert.equal([invalid.status, invalid.reason], [400, 'validation_failed']);
    assert.equal(
      invalid.issues.map((i) => i.field),
      ['oId', 'point', 'memo'],
    );
    assert.type(invalid.idempotencyKey, 'string');

    const missing = await rejects(createAdminClient({ baseUrl: h.url, apiKey: key }).liveness.get('999999999'), BridgeError);
    assert.equal([missing.constructor, missing.status, missing.reason], [BridgeError, 404, 'user_not_found']);
  }));

test('429 whose Retry-After is past the deadline: RateLimitError at once, sent once', () =>
  withHarness({ RATE_LIMIT_PER_SECOND: '0.001', RATE_LIMIT_BURST: '1' }, async (h) => {
    const { key } = await h.key(['*']);
    const recorder = recordingFetch();
    const admin = createAdminClient({ baseUrl: h.url, apiKey: key, fetch: recorder.fetch, timeoutMs: 5_000 });
    assert.is((await admin.vip.get(ALICE.oId)).code, 0, 'the burst of one');
    recorder.sent.length = 0;
    const limited = await rejects(admin.vip.get(ALICE.oId), RateLimitError);
    assert.equal([limited.status, limited.reason], [429, 'rate_limited']);
    assert.ok(limited.retryAfterSeconds !== undefined && limited.retryAfterSeconds > 5, `Retry-After ${limited.retryAfterSeconds}`);
    assert.is(recorder.sent.length, 1, 'no attempt was made that the deadline could not wait for');
    assertOneRequestId(recorder.sent, limited);
  }));

test('429 with a Retry-After the deadline allows: waited for, then answered', () =>
  withHarness({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' }, async (h) => {
    const { key } = await h.key(['*']);
    const recorder = recordingFetch();
    const admin = createAdminClient({ baseUrl: h.url, apiKey: key, fetch: recorder.fetch });
    assert.is((await admin.points.edit(edit('sdk: limited 1'))).code, 0);
    recorder.sent.length = 0;
    assert.is((await admin.points.edit(edit('sdk: limited 2'))).code, 0);
    assert.is(recorder.sent.length, 2, 'limited, then answered');
    assert.equal(new Set(recorder.sent.map((s) => s.idempotencyKey)).size, 1, 'one Idempotency-Key');
    assert.equal(new Set(recorder.sent.map((s) => s.requestId)).size, 1, 'one X-Request-Id');
    assert.is(h.sim.pointsApplied('sdk: limited 2'), 1);
  }));

test('504 outcome_unknown: OutcomeUnknownError at the first answer, sent once, naming the operation', () =>
  withHarness({ COMMUNITY_TIMEOUT_MS: '300' }, async (h) => {
    const { key } = await h.key(['*']);
    const recorder = recordingFetch();
    const admin = createAdminClient({ baseUrl: h.url, apiKey: key, fetch: recorder.fetch, maxAttempts: 5 });
    h.sim.faultNext(POINTS_PATH, { kind: 'hang' });
    const memo = 'sdk: hang';
    const unknown = await rejects(admin.points.edit(edit(memo)), OutcomeUnknownError);
    assert.equal([unknown.status, unknown.reason, unknown.operationStatus], [504, 'outcome_unknown', 'unknown']);
    assert.match(unknown.operationId, /^[a-z0-9]{15}$/);
    assert.is(recorder.sent.length, 1, 'an outcome_unknown is never sent again');
    assertOneRequestId(recorder.sent, unknown);
    assert.is(h.sim.arrivals(POINTS_PATH).filter((a) => a.body.memo === memo).length, 1);
    const audit = await admin.audit.points(ALICE.oId);
    assert.equal(
      audit.data.items.map((e) => [e.operationId, e.requestId]),
      [[unknown.operationId, unknown.requestId]],
      'the audit ties the operation to the call',
    );
  }));

test('502 platform_failed: retried (nothing changed), then PlatformError', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key(['*']);
    const recorder = recordingFetch();
    const admin = createAdminClient({ baseUrl: h.url, apiKey: key, fetch: recorder.fetch, maxAttempts: 2 });
    h.sim.failNext(20, 'http500');
    const failed = await rejects(admin.liveness.get(ALICE.oId), PlatformError);
    assert.equal([failed.status, failed.reason, failed.platformMessage], [502, 'platform_failed', undefined]);
    assert.is(recorder.sent.length, 2, 'maxAttempts');
    assertOneRequestId(recorder.sent, failed);
  }));

test('no service: ConnectionError without a status, naming the request id it sent', async () => {
  const h: Harness = await startHarness();
  const { key } = await h.key(['*']);
  const baseUrl = h.url;
  await h.close();
  const recorder = recordingFetch();
  const refused = await rejects(createAdminClient({ baseUrl, apiKey: key, fetch: recorder.fetch, maxAttempts: 2 }).points.edit(edit('sdk: refused')), ConnectionError);
  assert.equal([refused.status, refused.reason], [undefined, 'connection_failed']);
  assert.match(refused.message, /^Network error: fetch failed \(connect ECONNREFUSED /);
  assert.is(recorder.sent.length, 2);
  assertOneRequestId(recorder.sent, refused);
  assert.is(refused.idempotencyKey, recorder.sent[0]!.idempotencyKey);
});

test.run();
