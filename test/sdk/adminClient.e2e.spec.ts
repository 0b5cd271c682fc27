// The SDK's admin client, imported as a package (the workspace build), against a real service and
// the platform simulator: every method once, failures as BridgeError, and retries that reuse the
// Idempotency-Key so the platform sees a request once however often it is sent.
import { BridgeError, ConnectionError, OutcomeUnknownError, createAdminClient, type AdminClientOptions, type Fetch } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { rejects } from '../support/rejects.js';
import { applied, connect, signIn } from '../support/streamsAndSignIn.js';

const POINTS_PATH = '/user/edit/points';

interface Sent {
  method: string;
  url: string;
  idempotencyKey: string | undefined;
}

/**
 * The global fetch, recording what it sends. `loseAnswerOf(n, reached)` lets the nth request reach
 * the service and, once `reached()` holds (by default: once the service has answered), reports a
 * network error instead of the answer, as a connection reset on the way back does.
 */
function recordingFetch() {
  const sent: Sent[] = [];
  const cutOff = new Map<number, (() => unknown) | undefined>();
  const doFetch: Fetch = async (url, init) => {
    sent.push({ method: init.method, url, idempotencyKey: init.headers['Idempotency-Key'] });
    const answer = fetch(url, init);
    if (!cutOff.has(sent.length)) return answer;
    const answered = answer.then((res) => res.text()).catch(() => undefined);
    const reached = cutOff.get(sent.length);
    await (reached ? eventually(reached, 'the request whose answer is lost to reach its point') : answered);
    throw new TypeError('fetch failed');
  };
  return { fetch: doFetch, sent, loseAnswerOf: (n: number, reached?: () => unknown) => cutOff.set(n, reached) };
}

async function withClient(run: (h: Harness, options: AdminClientOptions) => Promise<void>): Promise<void> {
  const h = await startHarness();
  try {
    const { key } = await h.key(['*']);
    await run(h, { baseUrl: `${h.url}/`, apiKey: key });
  } finally {
    await h.close();
  }
}

test('every method answers with the service’s typed body', () =>
  withClient(async (h, options) => {
    const admin = createAdminClient(options);
    const oId = ALICE.oId;

    const points = await admin.points.edit({ oId, point: 5, memo: 'sdk: welcome' });
    assert.is(points.code, 0);
    assert.type(points.data?.transactionId, 'string');
    assert.is(h.sim.user(oId)?.points, 105);

    assert.is((await admin.medal.give({ oId, name: 'SDK', description: 'used the SDK', attr: 'url=https://example.test/m.png&backcolor=ffffff&fontcolor=000000' })).code, 0);
    assert.equal(
      h.sim.user(oId)?.medals.map((m) => m.name),
      ['SDK'],
    );
    assert.is((await admin.medal.remove({ oId, name: 'SDK' })).code, 0);
    assert.equal(h.sim.user(oId)?.medals, []);

    assert.is((await admin.items.edit({ oId, item: 'checkin1day', sum: 1 })).code, 0);
    assert.equal((await admin.items.query({ oId })).data, { checkin1day: 3 });
    assert.is((await admin.liveness.get(oId)).liveness, 80.2);

    const granted = await admin.vip.submit({ oId, quality: 'vip', expired: '2030-01-01 00:00:00' });
    assert.is(granted.data.expired, '2030-01-01 00:00:00.000Z');
    const batch = await admin.vip.batchSubmit({ oId, vips: [{ quality: 'svip', expired: '2031-01-01 00:00:00' }] });
    assert.equal([batch.data.succeed, batch.data.failed], [1, 0]);
    assert.equal(
      (await admin.vip.get(oId)).data.map((r) => r.quality),
      ['svip', 'vip'],
    );

    const pushed = await admin.message.push({ oIds: [oId], name: 'hello', data: { n: 1 } });
    assert.equal(pushed.data, { online: [], offline: [oId], unknown: [] });

    const { stream, clientId } = await connect(h);
    assert.equal(await admin.user.get(clientId), { code: 0, msg: 'success', data: { authenticated: false, clientId } });
    await signIn(h, clientId, oId);
    const signedIn = await admin.user.get(clientId);
    assert.ok(signedIn?.data.authenticated && signedIn.data.user.oId === oId, JSON.stringify(signedIn));
    const online = await admin.presence.list({ limit: 10 });
    assert.equal(
      online.data.items.map((e) => [e.oId, e.clients]),
      [[oId, 1]],
    );
    const alice = await admin.presence.get(oId);
    assert.equal([alice.data.online, alice.data.clients, alice.data.since], [true, 1, online.data.items[0]!.since]);
    const gone = applied(h, (e) => e.type === 'ClientDisconnected');
    stream.close();
    await gone;
    assert.is(await admin.user.get(clientId), null, 'a disconnected client is no client');
    assert.equal((await admin.presence.get(oId)).data, { oId, online: false, clients: 0, userId: alice.data.userId });

    const pointsAudit = await admin.audit.points(oId);
    assert.equal(
      pointsAudit.data.items.map((e) => [e.request.memo, e.outcome.status]),
      [['sdk: welcome', 'applied']],
    );
    const firstVip = await admin.audit.vip(oId, { limit: 1 });
    assert.equal(
      firstVip.data.items.map((e) => e.quality),
      ['vip'],
    );
    const secondVip = await admin.audit.vip(oId, { after: firstVip.data.next! });
    assert.equal(
      secondVip.data.items.map((e) => e.quality),
      ['svip'],
    );
    const medals = await admin.audit.medals(oId);
    assert.equal(
      medals.data.items.map((e) => [e.action, e.request.name, e.outcome.status]),
      [
        ['give', 'SDK', 'applied'],
        ['remove', 'SDK', 'applied'],
      ],
    );
    const items = await admin.audit.items(oId);
    assert.equal(
      items.data.items.map((e) => [e.request.item, e.request.sum, e.outcome.status]),
      [['checkin1day', 1, 'applied']],
    );
  }));

test('failures throw BridgeError with the service’s status, message and data', () =>
  withClient(async (h, options) => {
    const unknownKey = await rejects(createAdminClient({ ...options, apiKey: `cbk_${'0'.repeat(27)}` }).vip.get(ALICE.oId), BridgeError);
    assert.equal([unknownKey.status, unknownKey.message, unknownKey.data, unknownKey.reason], [401, 'Invalid apiKey', {}, undefined]);

    const { key: readOnly } = await h.key(['vip:read']);
    const forbidden = await rejects(createAdminClient({ ...options, apiKey: readOnly }).points.edit({ oId: ALICE.oId, point: 1, memo: 'no' }), BridgeError);
    assert.equal([forbidden.status, forbidden.message], [403, 'No permission to access this resource']);

    const admin = createAdminClient(options);
    const invalid = await rejects(admin.points.edit({ oId: 'alice', point: 0, memo: '' }, { idempotencyKey: 'sdk-invalid' }), BridgeError);
    assert.is(invalid.status, 400);
    assert.equal(
      invalid.data.issues?.map((i) => i.field),
      ['oId', 'point', 'memo'],
    );
    assert.is(invalid.idempotencyKey, 'sdk-invalid');

    const unknownUser = await rejects(admin.liveness.get('999999999'), BridgeError);
    assert.equal([unknownUser.status, unknownUser.reason], [404, 'user_not_found']);
    assert.is(unknownUser.idempotencyKey, undefined, 'reads carry no key');
  }));

test('POSTs carry a fresh Idempotency-Key each (or the one given); GETs none', () =>
  withClient(async (_h, options) => {
    const recorder = recordingFetch();
    const admin = createAdminClient({ ...options, fetch: recorder.fetch });
    await admin.points.edit({ oId: ALICE.oId, point: 1, memo: 'sdk: key 1' });
    await admin.points.edit({ oId: ALICE.oId, point: 1, memo: 'sdk: key 2' });
    await admin.points.edit({ oId: ALICE.oId, point: 1, memo: 'sdk: key 3' }, { idempotencyKey: 'game-order-17' });
    await admin.vip.get(ALICE.oId);
    const [first, second, given, read] = recorder.sent;
    assert.match(first!.idempotencyKey!, /^[0-9a-f-]{36}$/);
    assert.is.not(second!.idempotencyKey, first!.idempotencyKey);
    assert.is(given!.idempotencyKey, 'game-order-17');
    assert.equal([read!.method, read!.idempotencyKey], ['GET', undefined]);
  }));

test('an outcome-unknown write is not sent again and reaches the platform once; the error names the operation', () =>
  withClient(async (h, options) => {
    const recorder = recordingFetch();
    const admin = createAdminClient({ ...options, fetch: recorder.fetch });
    // The platform applies the change and then drops the connection: the service cannot know.
    h.sim.faultNext(POINTS_PATH, { kind: 'applyThenReset' });
    const memo = 'sdk: reset';
    const unknown = await rejects(admin.points.edit({ oId: ALICE.oId, point: 1, memo }), OutcomeUnknownError);
    assert.ok(unknown.status === 502 || unknown.status === 504, `${unknown.status} ${unknown.message}`);
    assert.match(unknown.message, /^Outcome unknown: /);
    assert.equal([unknown.reason, unknown.operationId, unknown.operationStatus], ['outcome_unknown', unknown.data.operationId, 'unknown']);
    assert.is(recorder.sent.length, 1, 'the service will not send it again: neither does the client');
    assert.is(unknown.idempotencyKey, recorder.sent[0]!.idempotencyKey);
    assert.is(h.sim.arrivals(POINTS_PATH).filter((a) => a.body.memo === memo).length, 1, 'sent to the platform once');
    const audit = await admin.audit.points(ALICE.oId);
    assert.equal(
      audit.data.items.map((e) => [e.operationId, e.outcome.status]),
      [[unknown.operationId, 'unknown']],
    );
  }));

test('an answer lost on the way back: the retry gets the stored answer, applied once', () =>
  withClient(async (h, options) => {
    const recorder = recordingFetch();
    recorder.loseAnswerOf(1);
    const admin = createAdminClient({ ...options, fetch: recorder.fetch });
    const memo = 'sdk: lost answer';
    const answer = await admin.points.edit({ oId: ALICE.oId, point: 1, memo });
    assert.is(answer.code, 0);
    assert.is(recorder.sent.length, 2);
    assert.is(recorder.sent[1]!.idempotencyKey, recorder.sent[0]!.idempotencyKey);
    assert.is(h.sim.pointsApplied(memo), 1);
  }));

test('a retry that finds its first attempt still running waits as told, then gets its answer', () =>
  withClient(async (h, options) => {
    const memo = 'sdk: still running';
    const recorder = recordingFetch();
    recorder.loseAnswerOf(1, () => h.sim.arrivals(POINTS_PATH).some((a) => a.body.memo === memo));
    const admin = createAdminClient({ ...options, fetch: recorder.fetch });
    // A slow platform: the first attempt is still at work when the second arrives (409 + Retry-After).
    h.sim.faultNext(POINTS_PATH, { kind: 'delayThenApply', ms: 700 });
    const answer = await admin.points.edit({ oId: ALICE.oId, point: 1, memo });
    assert.is(answer.code, 0);
    assert.is(recorder.sent.length, 3, 'lost, still running, answered');
    assert.equal(new Set(recorder.sent.map((s) => s.idempotencyKey)).size, 1);
    assert.is(h.sim.pointsApplied(memo), 1);
  }));

test('timeoutMs bounds the call; the error keeps the key, and a later retry with it does not apply twice', () =>
  withClient(async (h, options) => {
    const admin = createAdminClient({ ...options, timeoutMs: 300 });
    h.sim.faultNext(POINTS_PATH, { kind: 'applyThenDelay', ms: 600 });
    const memo = 'sdk: timeout';
    const error = await rejects(admin.points.edit({ oId: ALICE.oId, point: 1, memo }), ConnectionError);
    assert.equal([error.status, error.reason, error.message], [undefined, 'timeout', 'No answer within 300 ms']);
    const platformAnswered = () => h.sim.arrivals(POINTS_PATH).find((a) => a.body.memo === memo)?.answered;
    assert.is(platformAnswered(), false, 'the client gave up before the platform, and so the service, answered');
    assert.type(error.idempotencyKey, 'string');
    await eventually(platformAnswered, 'the platform to answer the first attempt');
    const retried = await createAdminClient(options).points.edit({ oId: ALICE.oId, point: 1, memo }, { idempotencyKey: error.idempotencyKey! });
    assert.is(retried.code, 0);
    assert.is(h.sim.pointsApplied(memo), 1);
  }));

test('no service at all: a network error after the bounded attempts', async () => {
  const h = await startHarness();
  const { key } = await h.key(['*']);
  const baseUrl = h.url;
  await h.close();
  const error = await rejects(createAdminClient({ baseUrl, apiKey: key, maxAttempts: 2 }).vip.get(ALICE.oId), ConnectionError);
  assert.equal([error.status, error.reason], [undefined, 'connection_failed']);
  assert.match(error.message, /^Network error: fetch failed \(connect ECONNREFUSED /);
});

test.run();
