// docs/api.md (points, medals, items, liveness, user sync), docs/architecture.md "the platform owns": points, medals,
// items and liveness are forwarded to the platform (the simulator here), each write is recorded
// as an intent event and an outcome event, and every way the platform can fail has its answer.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { OperationOutcome, OperationRequested, UserEvent } from '../../src/domain/events.js';
import type { RecordedEvent } from '../../src/store/port.js';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy.js';
import { ALICE, BOB, startHarness, type Answer, type Harness } from '../support/harness.js';

type Ctx = { h: Harness; key: string; keyId: string };
const ATTR = 'url=https://example.test/medal.png&backcolor=ffffff&fontcolor=000000';
const SPEC_OK_KEYS = ['code', 'msg'];

type Intent = RecordedEvent & OperationRequested;
type Outcome = RecordedEvent & OperationOutcome;

async function lastPosition(h: Harness): Promise<number> {
  return (await h.events()).at(-1)?.position ?? 0;
}

/** Events recorded after `position`, by stream prefix. */
async function eventsAfter(h: Harness, position: number, prefix?: string): Promise<RecordedEvent[]> {
  return (await h.events(prefix)).filter((e) => e.position > position);
}

/** The one operation recorded after `position`: its two events, intent then outcome. */
async function oneOperationAfter(h: Harness, position: number): Promise<[Intent, Outcome]> {
  const events = await eventsAfter(h, position, 'operation-');
  assert.is(events.length, 2, `one intent and one outcome: ${events.map((e) => e.type).join(', ')}`);
  const [intent, outcome] = events as [Intent, Outcome];
  assert.is(intent.streamName, outcome.streamName, 'both in the operation stream');
  assert.is(intent.streamName, `operation-${intent.data.operationId}`);
  assert.is(outcome.data.operationId, intent.data.operationId);
  return [intent, outcome];
}

function assertIntent<T extends Intent['type']>(event: Intent, type: T, c: Ctx, oId: string, request: unknown): asserts event is Extract<Intent, { type: T }> {
  assert.is(event.type, type);
  assert.is(event.data.appId, 'game-one');
  assert.is(event.data.keyId, c.keyId);
  assert.is(event.data.oId, oId);
  assert.type(event.data.userId, 'string');
  assert.equal(event.data.request, request);
  assert.match(event.data.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
}

function assertOutcome<T extends Outcome['type']>(event: Outcome, type: T): asserts event is Extract<Outcome, { type: T }> {
  assert.is(event.type, type);
  assert.match(event.data.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
}

/** The error form, `data` exactly: its `reason` and that reason's fields. */
function assertError(res: Answer, status: number, message: RegExp | undefined, data: Record<string, unknown> & { reason: string }) {
  assert.is(res.status, status, res.text);
  assert.equal(Object.keys(res.body).sort(), ['code', 'data', 'message'], res.text);
  assert.is(res.body.code, status);
  assert.equal(res.body.data, data);
  if (message) assert.match(res.body.message, message);
}

/** The platform failed and nothing changed: no operation to name. */
const FAILED = { reason: 'platform_failed' };

/** The platform's refusal, its own message carried as it said it. */
function rejected(res: Answer) {
  assert.match(res.body.data?.platformMessage ?? '', /^金手指不正确/);
  return { reason: 'platform_rejected', platformMessage: res.body.data.platformMessage };
}
const assertRejected = (res: Answer) => assertError(res, 422, /金手指不正确/, rejected(res));

/** Sent, and then no answer that can be trusted: the body names the operation, which will not be sent again. */
function assertOutcomeUnknown(res: Answer, status: number, operationId: string, message: RegExp) {
  assertError(res, status, message, { reason: 'outcome_unknown', operationId, status: 'unknown' });
  assert.match(res.body.message, /^Outcome unknown: .*will not be sent again/);
}

async function withKey(h: Harness): Promise<Ctx> {
  const { key, id } = await h.key(['*']);
  return { h, key, keyId: id };
}

// ---------------------------------------------------------------------------------------------
const ops = suite<Ctx>('platform operations against a healthy platform');

ops.before(async (context) => {
  Object.assign(context, await withKey(await startHarness()));
});
ops.after(async ({ h }) => {
  await h?.close();
});

ops('points edit takes the spec body, answers {code:0,msg,data:{transactionId}} and changes the balance on the platform', async (c) => {
  const before = await lastPosition(c.h);
  const res = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 10, memo: 'daily reward' }, c.key);
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body), [...SPEC_OK_KEYS, 'data']);
  assert.is(res.body.code, 0);
  assert.match(res.body.msg, /交易oId为/, 'msg is the platform message');
  assert.is(res.body.msg, `积分变更成功，交易oId为：${res.body.data.transactionId}`, 'the transaction id it names');
  assert.ok(c.h.sim.user(ALICE.oId)!.ledger.some((e) => e.transactionId === res.body.data.transactionId));
  assert.is(c.h.sim.user(ALICE.oId)!.points, 110);
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertIntent(intent, 'PointsEditRequested', c, ALICE.oId, { point: 10, memo: 'daily reward' });
  assert.is(intent.data.userName, 'alice');
  assertOutcome(outcome, 'OperationApplied');
  assert.is(outcome.data.message, res.body.msg);
});

ops('a negative point deducts', async (c) => {
  const start = c.h.sim.user(ALICE.oId)!.points;
  const res = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: -30, memo: 'shop purchase' }, c.key);
  assert.is(res.status, 200, res.text);
  assert.is(res.body.code, 0);
  assert.is(c.h.sim.user(ALICE.oId)!.points, start - 30);
  assert.equal(c.h.sim.user(ALICE.oId)!.ledger.at(-1), { ...c.h.sim.user(ALICE.oId)!.ledger.at(-1)!, point: -30, memo: 'shop purchase' });
});

ops('medal give installs the medal on the platform; data defaults to ""', async (c) => {
  const before = await lastPosition(c.h);
  const res = await c.h.post('/adm/medal/give', { oId: ALICE.oId, name: 'Champion', description: 'won the cup', attr: ATTR }, c.key);
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body), SPEC_OK_KEYS);
  assert.is(res.body.code, 0);
  assert.type(res.body.msg, 'string');
  assert.equal(c.h.sim.user(ALICE.oId)!.medals, [{ name: 'Champion', description: 'won the cup', attr: ATTR, data: '' }]);
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertIntent(intent, 'MedalGiveRequested', c, ALICE.oId, { name: 'Champion', description: 'won the cup', attr: ATTR, data: '' });
  assertOutcome(outcome, 'OperationApplied');

  await c.h.post('/adm/medal/give', { oId: ALICE.oId, name: 'Helper', description: 'helped', attr: ATTR, data: 'season 3' }, c.key);
  assert.equal(
    c.h.sim.user(ALICE.oId)!.medals.map((m) => [m.name, m.data]),
    [
      ['Champion', ''],
      ['Helper', 'season 3'],
    ],
  );
  assert.equal(
    c.h.service.deps.readModels.medals.medals(ALICE.oId).map((m) => m.name),
    ['Champion', 'Helper'],
  );
});

ops('medal remove takes the medal away on the platform', async (c) => {
  const before = await lastPosition(c.h);
  const res = await c.h.post('/adm/medal/remove', { oId: ALICE.oId, name: 'Champion' }, c.key);
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body), SPEC_OK_KEYS);
  assert.is(res.body.code, 0);
  assert.equal(
    c.h.sim.user(ALICE.oId)!.medals.map((m) => m.name),
    ['Helper'],
  );
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertIntent(intent, 'MedalRemoveRequested', c, ALICE.oId, { name: 'Champion' });
  assertOutcome(outcome, 'OperationApplied');
  assert.equal(
    c.h.service.deps.readModels.medals.medals(ALICE.oId).map((m) => m.name),
    ['Helper'],
  );
});

ops('items query answers {code:0,msg,data:<bag>} with the platform bag, and records no operation', async (c) => {
  const before = await lastPosition(c.h);
  const res = await c.h.post('/adm/items/query', { oId: ALICE.oId }, c.key);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { code: 0, msg: 'success', data: { checkin1day: 2 } });
  const empty = await c.h.post('/adm/items/query', { oId: BOB.oId }, c.key);
  assert.equal(empty.body, { code: 0, msg: 'success', data: {} });
  assert.equal(await eventsAfter(c.h, before, 'operation-'), []);
});

ops('items edit adds and deducts on the platform and answers {code:0,msg}', async (c) => {
  const before = await lastPosition(c.h);
  const add = await c.h.post('/adm/items/edit', { oId: ALICE.oId, item: 'checkin1day', sum: 3 }, c.key);
  assert.is(add.status, 200, add.text);
  assert.equal(Object.keys(add.body), SPEC_OK_KEYS);
  assert.is(add.body.code, 0);
  assert.equal(c.h.sim.user(ALICE.oId)!.items, { checkin1day: 5 });
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertIntent(intent, 'ItemsEditRequested', c, ALICE.oId, { item: 'checkin1day', sum: 3 });
  assertOutcome(outcome, 'OperationApplied');
  assert.equal(outcome.data.bag, { checkin1day: 5 });

  const take = await c.h.post('/adm/items/edit', { oId: ALICE.oId, item: 'checkin1day', sum: -5 }, c.key);
  assert.is(take.status, 200, take.text);
  assert.equal(c.h.sim.user(ALICE.oId)!.items, { checkin1day: 0 }, 'deducting everything the user has is fine');
  const fresh = await c.h.post('/adm/items/edit', { oId: ALICE.oId, item: 'sign-card', sum: 1 }, c.key);
  assert.is(fresh.status, 200, fresh.text);
  assert.equal(c.h.sim.user(ALICE.oId)!.items, { checkin1day: 0, 'sign-card': 1 });
  assert.equal(c.h.service.deps.readModels.items.netChanges(ALICE.oId), { checkin1day: -2, 'sign-card': 1 });
});

ops('a deduction the user cannot afford is 409, the bag unchanged and the platform edit never called', async (c) => {
  c.h.sim.updateUser(BOB.oId, { items: { checkin1day: 2 } });
  const editsBefore = c.h.sim.calls('/user/edit/items');
  const before = await lastPosition(c.h);
  const res = await c.h.post('/adm/items/edit', { oId: BOB.oId, item: 'checkin1day', sum: -3 }, c.key);
  assertError(res, 409, /checkin1day/, { reason: 'conflict' });
  assert.match(res.body.message, /^sum: /);
  assert.equal(c.h.sim.user(BOB.oId)!.items, { checkin1day: 2 });
  assert.is(c.h.sim.calls('/user/edit/items'), editsBefore, 'the edit was not sent');
  const missing = await c.h.post('/adm/items/edit', { oId: BOB.oId, item: 'never-had', sum: -1 }, c.key);
  assertError(missing, 409, undefined, { reason: 'conflict' });
  assert.equal(c.h.sim.user(BOB.oId)!.items, { checkin1day: 2 });
  assert.is(c.h.sim.calls('/user/edit/items'), editsBefore);
  // The attempt is on record, as surely not having happened.
  const ops = await eventsAfter(c.h, before, 'operation-');
  assert.equal(
    ops.map((e) => e.type),
    ['ItemsEditRequested', 'OperationFailed', 'ItemsEditRequested', 'OperationFailed'],
  );
  assert.equal(c.h.service.deps.readModels.items.netChanges(BOB.oId), {});
});

ops('liveness answers {code:0,msg,liveness:<number>} and records no operation', async (c) => {
  const before = await lastPosition(c.h);
  const res = await c.h.get(`/adm/liveness/${ALICE.oId}`, c.key);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { code: 0, msg: 'success', liveness: 80.2 });
  assert.type(res.body.liveness, 'number');
  assert.equal(await eventsAfter(c.h, before, 'operation-'), []);
});

ops('an oId the platform does not know is 404 {code:404,message,data:{reason:"user_not_found",oId}} on every endpoint, and no user is created', async (c) => {
  const ghost = '9999999999999';
  const before = await lastPosition(c.h);
  const answers = [
    await c.h.post('/adm/points/edit', { oId: ghost, point: 1, memo: 'm' }, c.key),
    await c.h.post('/adm/medal/give', { oId: ghost, name: 'n', description: 'd', attr: ATTR }, c.key),
    await c.h.post('/adm/medal/remove', { oId: ghost, name: 'n' }, c.key),
    await c.h.post('/adm/items/query', { oId: ghost }, c.key),
    await c.h.post('/adm/items/edit', { oId: ghost, item: 'x', sum: 1 }, c.key),
    await c.h.get(`/adm/liveness/${ghost}`, c.key),
    await c.h.get(`/adm/vip/${ghost}`, c.key),
    await c.h.post('/adm/vip/submit', { oId: ghost, quality: 'vip', expired: '2030-01-01 00:00:00' }, c.key),
    await c.h.post('/adm/vip/batch-submit', { oId: ghost, vips: [{ quality: 'vip', expired: '2030-01-01 00:00:00' }] }, c.key),
  ];
  for (const res of answers) assertError(res, 404, new RegExp(ghost), { reason: 'user_not_found', oId: ghost });
  assert.equal(await eventsAfter(c.h, before), [], 'nothing recorded: no user, no operation, no VIP');
  assert.is(c.h.service.deps.readModels.users.byOid(ghost), undefined);
});

ops('user sync: registered on first use, a rename records only the changed field, no change records nothing', async (c) => {
  const stream = `user-${BOB.oId}`;
  const userEvents = async () => (await c.h.events(stream)).filter((e) => e.streamName === stream) as Array<RecordedEvent & UserEvent>;
  // BOB was already used above (the 409 test): registered exactly once, whatever the number of calls.
  const first = await userEvents();
  assert.equal(
    first.map((e) => e.type),
    ['UserRegistered'],
  );
  assert.equal(
    { ...first[0]!.data, userId: undefined, at: undefined },
    { userId: undefined, oId: BOB.oId, name: BOB.userName, nickname: BOB.nickname, avatar: BOB.avatar, at: undefined },
  );
  const userId = first[0]!.data.userId;

  c.h.sim.updateUser(BOB.oId, { userName: 'bobby' });
  const renamed = await c.h.post('/adm/points/edit', { oId: BOB.oId, point: 1, memo: 'after rename' }, c.key);
  assert.is(renamed.status, 200, renamed.text);
  assert.is(c.h.sim.user(BOB.oId)!.points, 6, 'the platform was called with the new user name');
  const second = await userEvents();
  assert.equal(
    second.map((e) => e.type),
    ['UserRegistered', 'UserProfileChanged'],
  );
  const change = second[1]!;
  assert.ok(change.type === 'UserProfileChanged');
  assert.equal(change.data.changes, { name: 'bobby' });
  assert.is(change.data.userId, userId, 'the internal id does not change');
  assert.is(c.h.service.deps.readModels.users.byOid(BOB.oId)!.id, userId);

  await c.h.get(`/adm/liveness/${BOB.oId}`, c.key);
  await c.h.post('/adm/items/query', { oId: BOB.oId }, c.key);
  assert.is((await userEvents()).length, 2, 'nothing changed, nothing recorded');
});

ops('concurrent first calls for one user register it once', async (c) => {
  c.h.sim.addUser({ oId: '1630399136799', userName: 'carol' });
  const answers = await Promise.all(Array.from({ length: 8 }, () => c.h.get('/adm/liveness/1630399136799', c.key)));
  for (const res of answers) assert.is(res.status, 200, res.text);
  assert.equal(
    (await c.h.events('user-1630399136799')).map((e) => e.type),
    ['UserRegistered'],
  );
});

ops.run();

// ---------------------------------------------------------------------------------------------
// The service reaches the platform through a fault proxy, with COMMUNITY_TIMEOUT_MS at 300.
const faulty = suite<Ctx & { proxy: FaultProxy }>('a platform that fails');

faulty.before(async (context) => {
  context.proxy = await startFaultProxy();
  const h = await startHarness({ env: { COMMUNITY_URL: context.proxy.url, COMMUNITY_TIMEOUT_MS: '300' } });
  context.proxy.target = h.simUrl;
  Object.assign(context, await withKey(h));
});
faulty.after(async ({ h, proxy }) => {
  await h?.close();
  await proxy?.close();
});

faulty('an HTTP 500 on the user lookup is 502 {code:502}; nothing is recorded', async (c) => {
  const before = await lastPosition(c.h);
  c.h.sim.failNext(1, 'http500');
  const res = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 5, memo: 'm' }, c.key);
  assertError(res, 502, /community platform failed/, FAILED);
  assert.not.match(res.text, /sim-key/, 'no gold-finger key in an answer');
  assert.is(c.h.sim.user(ALICE.oId)!.points, 100);
  assert.equal(await eventsAfter(c.h, before), []);
});

faulty('garbage from the user lookup is 502', async (c) => {
  c.h.sim.failNext(1, 'garbage');
  assertError(await c.h.get(`/adm/liveness/${ALICE.oId}`, c.key), 502, /community platform failed/, FAILED);
});

faulty('an HTTP 500 on the write is 502 and the outcome is recorded as unknown', async (c) => {
  const before = await lastPosition(c.h);
  c.proxy.failNext('/user/edit/points', { kind: 'http500' });
  const res = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 5, memo: 'm' }, c.key);
  assert.is(c.h.sim.user(ALICE.oId)!.points, 100);
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertOutcomeUnknown(res, 502, intent.data.operationId, /community platform failed/);
  assertIntent(intent, 'PointsEditRequested', c, ALICE.oId, { point: 5, memo: 'm' });
  assertOutcome(outcome, 'OperationOutcomeUnknown');
  assert.match(outcome.data.reason, /HTTP 500/);
});

faulty('garbage answering a write is 502 and the outcome is recorded as unknown', async (c) => {
  const before = await lastPosition(c.h);
  c.proxy.failNext('/user/edit/give-metal', { kind: 'garbage' });
  const res = await c.h.post('/adm/medal/give', { oId: ALICE.oId, name: 'n', description: 'd', attr: ATTR }, c.key);
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertOutcomeUnknown(res, 502, intent.data.operationId, /community platform failed/);
  assertOutcome(outcome, 'OperationOutcomeUnknown');
  assert.match(outcome.data.reason, /unexpected answer/);
});

faulty('garbage answering an items query or liveness is 502', async (c) => {
  c.proxy.failNext('/user/query/items', { kind: 'garbage' });
  assertError(await c.h.post('/adm/items/query', { oId: ALICE.oId }, c.key), 502, undefined, FAILED);
  c.proxy.failNext('/user/liveness', { kind: 'http500' });
  assertError(await c.h.get(`/adm/liveness/${ALICE.oId}`, c.key), 502, undefined, FAILED);
});

// The simulator records a request once its delay is over: a 504 while none is recorded answered
// without waiting for the platform.
const LOOKUP = '/api/user/getInfoById';

faulty('a user lookup slower than COMMUNITY_TIMEOUT_MS is 504 without waiting for it; nothing is recorded', async (c) => {
  const before = await lastPosition(c.h);
  const lookups = c.h.sim.arrivals(LOOKUP).length;
  c.h.sim.setDelay(1000);
  let res: Answer;
  try {
    res = await c.h.post('/adm/points/edit', { oId: BOB.oId, point: 1, memo: 'slow' }, c.key);
    assert.is(c.h.sim.arrivals(LOOKUP).length, lookups, 'the platform has not taken the lookup yet');
  } finally {
    c.h.sim.setDelay(0);
  }
  assertError(res, 504, /did not answer within 300 ms/, { reason: 'platform_timeout' });
  assert.equal(await eventsAfter(c.h, before), [], 'no user created, no operation');
});

faulty('a write slower than COMMUNITY_TIMEOUT_MS is 504 without waiting for it, outcome unknown recorded', async (c) => {
  const before = await lastPosition(c.h);
  const writes = c.h.sim.calls('/user/edit/points');
  c.proxy.failNext('/user/edit/points', { kind: 'delay', ms: 1000 });
  const res = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 7, memo: 'slow write' }, c.key);
  assert.is(c.h.sim.calls('/user/edit/points'), writes, 'the write is still held on its way to the platform');
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertOutcomeUnknown(res, 504, intent.data.operationId, /did not answer within 300 ms/);
  assertIntent(intent, 'PointsEditRequested', c, ALICE.oId, { point: 7, memo: 'slow write' });
  assertOutcome(outcome, 'OperationOutcomeUnknown');
});

faulty('an unaffordable deduction whose pre-check read fails is 502 and never sends the edit', async (c) => {
  const edits = c.h.sim.calls('/user/edit/items');
  const before = await lastPosition(c.h);
  c.proxy.failNext('/user/query/items', { kind: 'http500' });
  assertError(await c.h.post('/adm/items/edit', { oId: ALICE.oId, item: 'checkin1day', sum: -1 }, c.key), 502, undefined, FAILED);
  assert.is(c.h.sim.calls('/user/edit/items'), edits);
  assert.equal(c.h.sim.user(ALICE.oId)!.items, { checkin1day: 2 });
  const [, outcome] = await oneOperationAfter(c.h, before);
  assertOutcome(outcome, 'OperationFailed');
});

faulty.run();

// ---------------------------------------------------------------------------------------------
const refused = suite<Ctx>('a platform that refuses (wrong gold-finger key)');

refused.before(async (context) => {
  Object.assign(context, await withKey(await startHarness({ env: { COMMUNITY_KEY: 'wrong' } })));
});
refused.after(async ({ h }) => {
  await h?.close();
});

refused('a write the platform refuses is 422 with the platform message, recorded as rejected', async (c) => {
  const before = await lastPosition(c.h);
  const res = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 5, memo: 'm' }, c.key);
  assertError(res, 422, /金手指不正确/, rejected(res));
  assert.not.match(res.text, /wrong/, 'the configured key is not echoed');
  assert.is(c.h.sim.user(ALICE.oId)!.points, 100);
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertIntent(intent, 'PointsEditRequested', c, ALICE.oId, { point: 5, memo: 'm' });
  assertOutcome(outcome, 'OperationRejected');
  assert.match(outcome.data.message, /金手指不正确/);
});

refused('reads the platform refuses are 422 too', async (c) => {
  assertRejected(await c.h.post('/adm/items/query', { oId: ALICE.oId }, c.key));
  assertRejected(await c.h.get(`/adm/liveness/${ALICE.oId}`, c.key));
  assertRejected(await c.h.post('/adm/medal/remove', { oId: ALICE.oId, name: 'x' }, c.key));
});

refused.run();

// ---------------------------------------------------------------------------------------------
const down = suite<Ctx>('a platform that is down');

down.before(async (context) => {
  Object.assign(context, await withKey(await startHarness({ env: { COMMUNITY_URL: 'http://127.0.0.1:1' } })));
});
down.after(async ({ h }) => {
  await h?.close();
});

// A refused connection is a failure at once: 502, never the timeout's 504.
down('every operation is 502 {code:502} saying the platform failed, not waiting for the timeout; nothing is recorded', async (c) => {
  const before = await lastPosition(c.h);
  assertError(await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 5, memo: 'm' }, c.key), 502, /community platform failed/, FAILED);
  assertError(await c.h.post('/adm/items/query', { oId: ALICE.oId }, c.key), 502, /community platform failed/, FAILED);
  assertError(await c.h.get(`/adm/liveness/${ALICE.oId}`, c.key), 502, /community platform failed/, FAILED);
  assertError(await c.h.get(`/adm/vip/${ALICE.oId}`, c.key), 502, /community platform failed/, FAILED);
  assert.equal(await eventsAfter(c.h, before), []);
});

down.run();

// ---------------------------------------------------------------------------------------------
const goesDown = suite<Ctx & { proxy: FaultProxy }>('a platform that goes down between the lookup and the write');

goesDown.before(async (context) => {
  context.proxy = await startFaultProxy();
  const h = await startHarness({ env: { COMMUNITY_URL: context.proxy.url } });
  context.proxy.target = h.simUrl;
  Object.assign(context, await withKey(h));
});
goesDown.after(async ({ h, proxy }) => {
  await h?.close();
  await proxy?.close();
});

goesDown('the write is refused a connection: 502, recorded as failed (it surely did not happen)', async (c) => {
  const before = await lastPosition(c.h);
  c.proxy.failNext('/api/user/getInfoById', { kind: 'goDownAfter' });
  const res = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 5, memo: 'm' }, c.key);
  assert.is(c.h.sim.user(ALICE.oId)!.points, 100);
  const [intent, outcome] = await oneOperationAfter(c.h, before);
  assertError(res, 502, /community platform failed/, FAILED);
  assertIntent(intent, 'PointsEditRequested', c, ALICE.oId, { point: 5, memo: 'm' });
  assertOutcome(outcome, 'OperationFailed');
  assert.match(outcome.data.reason, /ECONNREFUSED/);
});

goesDown.run();
