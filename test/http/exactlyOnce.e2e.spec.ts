// Exactly once toward the platform, in one process: an Idempotency-Key bound to its operation
// answers from the log whatever happens after the intent is recorded (an unexpected error, a lost
// outcome append, a restart, a sweep), never re-sends, and follows an operator's resolution. Each
// test counts from the simulator's own ledger how often a write reached the platform. (The same
// faults with killed processes are in test/faults.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { ConcurrencyError } from '../../src/domain/errors.js';
import { streams } from '../../src/domain/events.js';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/main.js';
import { IdempotencyService } from '../../src/services/idempotency.js';
import type { Clock } from '../../src/system/clock.js';
import { ALICE, startHarness, type Answer, type Harness, withHarness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';
import { failAppendsOf, holdFirstAppendOf } from '../support/appendFaults.js';
import { eventually } from '../support/eventually.js';

const POINTS = '/adm/points/edit';

function send(h: Harness, apiKey: string, idempotencyKey: string, body: unknown, path = POINTS): Promise<Answer> {
  return h.request('POST', path, { body, apiKey, headers: { 'Idempotency-Key': idempotencyKey } });
}

/** A second service process on the harness's store and simulator (another node of the cluster). */
const anotherNode = (h: Harness, env: Record<string, string>, clock?: Clock) =>
  startService(loadConfig({ PORT: '0', DATA_DIR: h.dataDir, COMMUNITY_URL: h.simUrl, COMMUNITY_KEY: SIMULATOR_KEY, LOG_LEVEL: 'silent', ...env }), { clock });

/** The key's claim is in the log (its request runs). */
const claimed = (h: Harness) => eventually(async () => (await h.events('idempotency-')).some((e) => e.type === 'IdempotentRequestStarted'), 'the first request to claim its key');

/** A claim older than this is stale; the tests move their clock past it. */
const STALE_MS = 60_000;

/** A points edit sent to that other node. */
async function sendTo(node: { url: string }, apiKey: string, idempotencyKey: string, body: unknown) {
  const res = await fetch(`${node.url}${POINTS}`, {
    method: 'POST',
    headers: { apiKey, 'Idempotency-Key': idempotencyKey, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** How many times the platform applied a points edit with this memo: the platform's own record. */
const applied = (h: Harness, memo: string) => h.sim.user(ALICE.oId)!.ledger.filter((e) => e.memo === memo).length;

/** A points audit entry, as far as these tests read it (the audit suites check its whole shape). */
type AuditedEdit = {
  operationId: string;
  request: { memo: string };
  outcome: { status: string; reason: string; resolution: { note: string; by: { appId?: string } } };
};

async function pointsAudit(h: Harness, apiKey: string, memo: string) {
  const res = await h.get(`/adm/audit/points/${ALICE.oId}`, apiKey);
  return (res.body.data.items as AuditedEdit[]).find((e) => e.request.memo === memo);
}

test('an unexpected error after the platform applied answers 502 outcome unknown and keeps the key: the retry does not apply again', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    const platform = h.service.deps.platform;
    const editPoints = platform.editPoints;
    platform.editPoints = async (request) => {
      await editPoints(request);
      throw new TypeError("Cannot read properties of undefined (reading 'msg')");
    };
    const body = { oId: ALICE.oId, point: 7, memo: 'bug after send' };
    const first = await send(h, key, 'bug', body);
    assert.is(first.status, 502, first.text);
    assert.match(first.body.message, /^Outcome unknown: .*will not be sent again/);
    assert.is(first.body.data.status, 'unknown');
    platform.editPoints = editPoints;
    const retry = await send(h, key, 'bug', body);
    assert.equal(
      [retry.status, retry.body.data, retry.headers.get('idempotent-replayed')],
      [504, { reason: 'outcome_unknown', operationId: first.body.data.operationId, status: 'unknown' }, 'true'],
      retry.text,
    );
    assert.is(applied(h, 'bug after send'), 1);
    assert.not.match(first.text, /TypeError|Cannot read/);
  }));

test('an outcome append that fails after the platform applied answers 504 outcome unknown; a retry says pending and never re-sends', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
    const body = { oId: ALICE.oId, point: 7, memo: 'disk full' };
    const first = await send(h, key, 'full', body);
    undo();
    assert.is(first.status, 504, first.text);
    assert.equal(first.body.data.status, 'pending');
    const retry = await send(h, key, 'full', body);
    assert.equal([retry.status, retry.body.data], [504, { reason: 'outcome_unknown', operationId: first.body.data.operationId, status: 'pending' }], retry.text);
    assert.is(applied(h, 'disk full'), 1);
    assert.is((await pointsAudit(h, key, 'disk full'))!.outcome.status, 'pending');
  }));

test('a restart of the same NODE_ID closes what it left pending as unknown; the key answers unknown with the reason in the audit', () =>
  withHarness({ NODE_ID: 'node-a', IDEMPOTENCY_CLAIM_STALE_MS: '60000' }, async (h) => {
    const { key } = await h.key();
    const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
    const body = { oId: ALICE.oId, point: 3, memo: 'left pending' };
    const first = await send(h, key, 'pending', body);
    undo();
    assert.is(first.status, 504, first.text);
    await h.restart();
    const retry = await send(h, key, 'pending', body);
    assert.equal([retry.status, retry.body.data], [504, { reason: 'outcome_unknown', operationId: first.body.data.operationId, status: 'unknown' }], retry.text);
    const entry = await pointsAudit(h, key, 'left pending');
    assert.is(entry!.outcome.status, 'unknown');
    assert.match(entry!.outcome.reason, /node-a stopped before the platform answered, and restarted/);
    assert.is(applied(h, 'left pending'), 1);
  }));

test('any node marks an operation still pending after OPERATION_PENDING_GRACE_MS as unknown', () =>
  withHarness({ OPERATION_PENDING_GRACE_MS: '200' }, async (h) => {
    const { key } = await h.key();
    const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
    await send(h, key, 'sweep', { oId: ALICE.oId, point: 2, memo: 'swept' });
    undo();
    const entry = await eventually(async () => {
      const found = await pointsAudit(h, key, 'swept');
      return found?.outcome.status === 'unknown' ? found : undefined;
    }, 'the pending operation became unknown');
    assert.match(entry.outcome.reason, /never came back/);
  }));

test('a claim whose process died before recording an operation is taken over once stale, and runs exactly once', async () => {
  const clock = movableClock();
  const h = await startHarness({ env: { IDEMPOTENCY_CLAIM_STALE_MS: '60000' }, clock });
  try {
    const { key, appId } = await h.key();
    const body = { oId: ALICE.oId, point: 4, memo: 'taken over' };
    // What a process that died during the user lookup leaves: a claim, bound to nothing.
    const stream = streams.idempotency(appId, createHash('sha256').update('takeover').digest('hex').slice(0, 40));
    const requestHash = IdempotencyService.requestHash('POST', POINTS, body);
    await h.service.deps.store.append(stream, [
      { type: 'IdempotentRequestStarted', data: { appId, requestHash, at: clock.now(), expires: new Date(Date.now() + 3_600_000).toISOString(), node: 'dead' } },
    ]);
    // Its age counts from when the log recorded it.
    clock.advance(61_000);
    const first = await send(h, key, 'takeover', body);
    assert.is(first.status, 200, first.text);
    const again = await send(h, key, 'takeover', body);
    assert.equal([again.status, again.headers.get('idempotent-replayed')], [200, 'true'], again.text);
    assert.is(applied(h, 'taken over'), 1);
  } finally {
    await h.close();
  }
});

test('a request that lost its claim to a retry sends nothing: the retry runs once', async () => {
  const clock = movableClock();
  const h = await startHarness({ env: { IDEMPOTENCY_CLAIM_STALE_MS: String(STALE_MS), COMMUNITY_TIMEOUT_MS: '2000' }, clock });
  try {
    const { key } = await h.key();
    const body = { oId: ALICE.oId, point: 6, memo: 'fenced' };
    h.sim.setDelay(600);
    const slow = send(h, key, 'fence', body);
    await claimed(h);
    clock.advance(STALE_MS + 1000);
    const takeover = send(h, key, 'fence', body);
    const [a, b] = await Promise.all([slow, takeover]);
    h.sim.setDelay(0);
    assert.is(b.status, 200, `the retry took the stale claim over: ${b.text}`);
    assert.is(a.status, 409, a.text);
    assert.match(a.body.message, /lost its claim/);
    assert.is(applied(h, 'fenced'), 1);
  } finally {
    await h.close();
  }
});

test('a request stalled between binding its key and recording its intent records and sends nothing once a retry on another node took over', async () => {
  const clock = movableClock();
  const h = await startHarness({ env: { IDEMPOTENCY_CLAIM_STALE_MS: String(STALE_MS) }, clock });
  try {
    const { key } = await h.key();
    const other = await anotherNode(h, { NODE_ID: 'node-b', IDEMPOTENCY_CLAIM_STALE_MS: String(STALE_MS) }, clock);
    try {
      const body = { oId: ALICE.oId, point: 8, memo: 'stalled intent' };
      const stall = holdFirstAppendOf(h.service.deps.store, 'PointsEditRequested');
      const stalled = send(h, key, 'stall', body);
      await stall.held;
      clock.advance(STALE_MS + 1000);
      const retry = await sendTo(other, key, 'stall', body);
      assert.is(retry.status, 200, retry.text);
      stall.release();
      const late = await stalled;
      assert.is(late.status, 409, late.text);
      assert.match(late.body.message, /lost its claim .*nothing was written or sent/);
      assert.is(applied(h, 'stalled intent'), 1);
      const audit = (await h.get(`/adm/audit/points/${ALICE.oId}`, key)).body.data.items.filter((e: { request: { memo: string } }) => e.request.memo === 'stalled intent');
      assert.is(audit.length, 1, 'one operation recorded');
    } finally {
      await other.close();
    }
  } finally {
    await h.close();
  }
});

test('a second process started by mistake with the same NODE_ID is refused while the first is live, and touches none of its work: the platform sees the write once', () =>
  withHarness({ NODE_ID: 'shared', IDEMPOTENCY_CLAIM_STALE_MS: '60000' }, async (h) => {
    const { key } = await h.key();
    const body = { oId: ALICE.oId, point: 9, memo: 'same node id' };
    const stall = holdFirstAppendOf(h.service.deps.store, 'PointsEditRequested');
    const stalled = send(h, key, 'twin', body);
    await stall.held;
    const twin = await anotherNode(h, { NODE_ID: 'shared' }).then(
      (started) => started,
      (error: Error) => error,
    );
    if (!(twin instanceof Error)) await twin.close();
    assert.instance(twin, Error, 'the twin started');
    assert.match((twin as Error).message, /^Another live process already runs as NODE_ID=shared \(instance [^)]+\): give each process its own NODE_ID$/);
    stall.release();
    const answer = await stalled;
    assert.is(answer.status, 200, answer.text);
    assert.is(applied(h, 'same node id'), 1);
  }));

test('a VIP grant recorded while the read models lag answers 200 and keeps the key: the retry replays it and records nothing more', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    assert.is((await h.get(`/adm/vip/${ALICE.oId}`, key)).status, 200, 'the user is known before the read models lag');
    const runner = h.service.deps.runner;
    const waitFor = runner.waitFor;
    runner.waitFor = () => Promise.reject(new Error('Read models did not reach position 1 within 5000 ms'));
    const body = { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' };
    const first = await send(h, key, 'lagging', body, '/adm/vip/submit');
    runner.waitFor = waitFor;
    assert.equal([first.status, first.body.data.quality, first.body.data.expired], [200, 'vip', '2030-01-01 00:00:00.000Z'], first.text);
    const retry = await send(h, key, 'lagging', body, '/adm/vip/submit');
    assert.equal([retry.status, retry.headers.get('idempotent-replayed'), retry.body], [200, 'true', first.body]);
    const userId = h.service.deps.readModels.users.byOid(ALICE.oId)!.id;
    assert.is((await h.service.deps.store.readStream(streams.vip(userId))).length, 1, 'one grant recorded');
  }));

test('a stream other writers keep moving past the retry deadline answers 409 that names no stream or revision, and frees the key', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    assert.is((await h.get(`/adm/vip/${ALICE.oId}`, key)).status, 200, 'the user is known');
    const store = h.service.deps.store;
    const append = store.append;
    let attempts = 0;
    store.append = (stream, events, options) => {
      if (!stream.startsWith('vip-')) return append(stream, events, options);
      attempts++;
      return Promise.reject(new ConcurrencyError(stream, attempts, attempts + 1));
    };
    const body = { oId: ALICE.oId, quality: 'svip', expired: '2030-01-01 00:00:00' };
    const refused = await send(h, key, 'contended', body, '/adm/vip/submit');
    store.append = append;
    assert.is(refused.status, 409, refused.text);
    assert.equal(refused.body, { code: 409, message: 'The record was changed by concurrent requests for too long; retry the request', data: { reason: 'concurrent_update' } });
    assert.ok(attempts > 3, `decided again ${attempts} times before giving up`);
    const retry = await send(h, key, 'contended', body, '/adm/vip/submit');
    assert.equal([retry.status, retry.headers.get('idempotent-replayed')], [200, null], retry.text);
  }));

test('a stored answer is replayed only to a key with the permission', () =>
  withHarness({}, async (h) => {
    const writer = await h.key(['points:edit'], 'game-one');
    const reader = await h.key(['vip:read'], 'game-one');
    const body = { oId: ALICE.oId, point: 1, memo: 'permission first' };
    assert.is((await send(h, writer.key, 'perm', body)).status, 200);
    const replay = await send(h, reader.key, 'perm', body);
    assert.equal([replay.status, replay.body.message, replay.headers.get('idempotent-replayed')], [403, 'No permission to access this resource', null]);
  }));

test('an operator resolves an unknown outcome over HTTP: the key and the audit follow, only an unknown outcome can be resolved', () =>
  withHarness({ NODE_ID: 'node-r' }, async (h) => {
    const { key } = await h.key(['points:edit', 'audit:read']);
    const operator = await h.key(['operations:resolve'], 'ops-desk', { allApps: true });
    const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
    const yes = { oId: ALICE.oId, point: 5, memo: 'resolved applied' };
    const no = { oId: ALICE.oId, point: 5, memo: 'resolved not applied' };
    const first = await send(h, key, 'yes', yes);
    const second = await send(h, key, 'no', no);
    undo();
    await h.restart();
    const resolve = (id: string, body: unknown, apiKey = operator.key) => h.post(`/adm/operations/${id}/resolve`, body, apiKey);

    assert.is((await resolve(first.body.data.operationId, { applied: true }, key)).status, 403, 'needs operations:resolve');
    const ok = await resolve(first.body.data.operationId, { applied: true, note: 'ledger shows +5' });
    assert.equal([ok.status, ok.body], [200, { code: 0, msg: 'success', data: { operationId: first.body.data.operationId, status: 'applied' } }], ok.text);
    const notApplied = await resolve(second.body.data.operationId, { applied: false, note: 'not in the ledger' });
    assert.is(notApplied.body.data.status, 'failed');
    const twice = await resolve(first.body.data.operationId, { applied: false });
    assert.is(twice.status, 409, twice.text);
    assert.match(twice.body.message, /is applied, not unknown/);
    assert.is((await resolve('nosuchoperation', { applied: true })).status, 404);
    assert.is((await resolve(first.body.data.operationId, { applied: 'yes' })).status, 400);

    const retryYes = await send(h, key, 'yes', yes);
    assert.equal([retryYes.status, retryYes.body.code], [200, 0], retryYes.text);
    assert.match(retryYes.body.msg, /resolved by app ops-desk \(key \w+, all apps\): ledger shows \+5/);
    const retryNo = await send(h, key, 'no', no);
    assert.is(retryNo.status, 409, retryNo.text);
    assert.match(retryNo.body.message, /was not applied .*send it again with a new Idempotency-Key/);
    const audited = (await pointsAudit(h, key, 'resolved applied'))!.outcome;
    assert.equal([audited.status, audited.resolution.note, audited.resolution.by.appId], ['applied', 'ledger shows +5', 'ops-desk']);
    assert.match(audited.reason, /restarted/);
    assert.is(applied(h, 'resolved applied') + applied(h, 'resolved not applied'), 2, 'each sent once, neither again');
  }));

test.run();
