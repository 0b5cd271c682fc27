// docs/decisions.md "VIP": VIP records are the service's own truth, one per
// user and quality; a resubmission keeps the record and its id; lists put svip before vip; a GET
// right after a write shows it; batches answer per entry; records survive a restart.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { VipBatchAnswer, VipListBody, VipRecord, VipSubmitAnswer } from '../../src/contract/answers.js';
import type { VipEvent } from '../../src/domain/events.js';
import type { RecordedEvent } from '../../src/store/port.js';
import { ALICE, BOB, startHarness, type Answer, type Harness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';

type Ctx = { h: Harness; key: string; keyId: string; clock: ReturnType<typeof movableClock> };
const SPEC_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const RECORD_ID = /^[a-z0-9]{15}$/;
const FULL_RECORD_KEYS = ['created', 'expired', 'id', 'quality', 'updated', 'userId'];
const BRIEF_RECORD_KEYS = ['expired', 'id', 'quality', 'userId'];

const vip = suite<Ctx>('VIP records');

vip.before(async (context) => {
  context.clock = movableClock();
  context.h = await startHarness({
    clock: context.clock,
    users: [
      { ...ALICE, points: 0 },
      { ...BOB, points: 0 },
      { oId: '1630399136790', userName: 'carol' },
      { oId: '1630399136791', userName: 'dave' },
      { oId: '1630399136792', userName: 'erin' },
    ],
  });
  const { key, id } = await context.h.key(['vip:read', 'vip:write']);
  context.key = key;
  context.keyId = id;
});
vip.after(async ({ h }) => {
  await h?.close();
});

const submit = (c: Ctx, oId: string, quality: unknown, expired: unknown) => c.h.post<v.InferOutput<typeof VipSubmitAnswer>>('/adm/vip/submit', { oId, quality, expired }, c.key);
const list = (c: Ctx, oId: string) => c.h.get<v.InferOutput<typeof VipListBody>>(`/adm/vip/${oId}`, c.key);
const batch = (c: Ctx, oId: string, vips: unknown) => c.h.post<v.InferOutput<typeof VipBatchAnswer>>('/adm/vip/batch-submit', { oId, vips }, c.key);
/** The user's VIP stream, as the events it holds. */
const vipEvents = async (c: Ctx, userId: string) => (await c.h.events(`vip-${userId}`)) as Array<RecordedEvent & VipEvent>;

function assertFullRecord(record: v.InferOutput<typeof VipRecord>, expected: { userId: string; quality: string; expired: string }) {
  assert.equal(Object.keys(record).sort(), FULL_RECORD_KEYS);
  assert.match(record.id, RECORD_ID);
  assert.is(record.userId, expected.userId);
  assert.is(record.quality, expected.quality);
  assert.is(record.expired, expected.expired);
  assert.match(record.created, SPEC_TIMESTAMP);
  assert.match(record.updated, SPEC_TIMESTAMP);
}

function assertInvalid(res: Answer, message: string | RegExp) {
  assert.is(res.status, 400, res.text);
  assert.is(res.body.code, 400);
  if (typeof message === 'string') assert.is(res.body.message, message);
  else assert.match(res.body.message, message);
  assert.ok(Array.isArray(res.body.data.issues), res.text);
}

vip('a user with no VIP lists nothing', async (c) => {
  const res = await list(c, BOB.oId);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { code: 0, msg: 'success', data: [] });
});

vip('submit answers {code:0,msg,data:<full record>} with expired as YYYY-MM-DD HH:MM:SS.000Z and userId the internal user id', async (c) => {
  const res = await submit(c, ALICE.oId, 'vip', '2030-01-31 12:00:00');
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body), ['code', 'msg', 'data']);
  assert.is(res.body.code, 0);
  assert.is(res.body.msg, 'success');
  const userId = c.h.service.deps.readModels.users.byOid(ALICE.oId)!.id;
  assertFullRecord(res.body.data, { userId, quality: 'vip', expired: '2030-01-31 12:00:00.000Z' });
  assert.is(res.body.data.created, res.body.data.updated, 'a new record: created = updated');
});

vip('a GET right after a submit shows it (read your writes)', async (c) => {
  for (let i = 0; i < 5; i++) {
    const expired = `2031-0${i + 1}-01 00:00:00`;
    const written = await submit(c, ALICE.oId, 'vip', expired);
    const read = await list(c, ALICE.oId);
    assert.equal(read.body.data, [written.body.data], `round ${i}`);
    assert.is(read.body.data[0]!.expired, `${expired}.000Z`);
  }
});

vip('svip is listed before vip, whatever the submission order', async (c) => {
  await submit(c, ALICE.oId, 'svip', '2029-12-31 23:59:59');
  const res = await list(c, ALICE.oId);
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.data.map((r) => r.quality),
    ['svip', 'vip'],
  );
  const userId = c.h.service.deps.readModels.users.byOid(ALICE.oId)!.id;
  assertFullRecord(res.body.data[0]!, { userId, quality: 'svip', expired: '2029-12-31 23:59:59.000Z' });
  assert.is.not(res.body.data[0]!.id, res.body.data[1]!.id, 'one record per quality');
});

vip('resubmitting a quality keeps the record id, replaces expired, moves updated and keeps created', async (c) => {
  const first = (await submit(c, BOB.oId, 'vip', '2030-01-01 00:00:00')).body.data;
  c.clock.advance(1000);
  const second = await submit(c, BOB.oId, 'vip', '2032-06-15 08:30:00');
  assert.is(second.status, 200, second.text);
  assert.is(second.body.data.id, first.id);
  assert.is(second.body.data.userId, first.userId);
  assert.is(second.body.data.expired, '2032-06-15 08:30:00.000Z');
  assert.is(second.body.data.created, first.created);
  assert.ok(second.body.data.updated > first.updated, `${second.body.data.updated} after ${first.updated}`);
  const listed = (await list(c, BOB.oId)).body.data;
  assert.equal(listed, [second.body.data], 'still one vip record');
});

vip('an expired in the past is accepted (it ends a VIP early)', async (c) => {
  const res = await submit(c, BOB.oId, 'vip', '2001-01-01 00:00:00');
  assert.is(res.status, 200, res.text);
  assert.is(res.body.data.expired, '2001-01-01 00:00:00.000Z');
});

vip('each write is recorded in the user VIP stream with the app and key', async (c) => {
  const userId = c.h.service.deps.readModels.users.byOid(BOB.oId)!.id;
  const events = await vipEvents(c, userId);
  assert.equal(
    events.map((e) => e.type),
    ['VipGranted', 'VipRenewed', 'VipRenewed'],
  );
  for (const e of events) {
    assert.is(e.data.appId, 'game-one');
    assert.is(e.data.keyId, c.keyId);
    assert.is(e.data.userId, userId);
  }
  const renewal = events[2]!;
  assert.ok(renewal.type === 'VipRenewed');
  assert.is(renewal.data.previousExpired, '2032-06-15T08:30:00.000Z');
});

vip('an impossible date is 400 naming expired, and nothing is written', async (c) => {
  const before = (await c.h.events('vip-')).length;
  for (const expired of ['2025-02-30 00:00:00', '2025-13-01 00:00:00', '2025-01-01 24:00:00', '2025-01-01', '2025-01-01T00:00:00Z', '']) {
    assertInvalid(await submit(c, ALICE.oId, 'vip', expired), 'expired: must be a real date and time written YYYY-MM-DD HH:MM:SS');
  }
  assertInvalid(await submit(c, ALICE.oId, 'vip', 20250101), 'expired: must be a string');
  assert.is((await c.h.events('vip-')).length, before);
});

vip('a quality other than vip or svip is 400 naming quality', async (c) => {
  for (const quality of ['gold', 'VIP', '', 1, null]) {
    assertInvalid(await submit(c, ALICE.oId, quality, '2030-01-01 00:00:00'), 'quality: must be "vip" or "svip"');
  }
});

vip('batch-submit answers {success,total,succeed,failed,failures} with brief records', async (c) => {
  const oId = '1630399136790';
  const res = await batch(c, oId, [
    { quality: 'svip', expired: '2030-01-01 00:00:00' },
    { quality: 'vip', expired: '2030-02-01 00:00:00' },
  ]);
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body), ['code', 'msg', 'data']);
  assert.is(res.body.code, 0);
  assert.is(res.body.msg, 'success');
  const { success, total, succeed, failed, failures } = res.body.data;
  assert.equal(Object.keys(res.body.data).sort(), ['failed', 'failures', 'succeed', 'success', 'total']);
  assert.equal([total, succeed, failed, failures], [2, 2, 0, []]);
  const userId = c.h.service.deps.readModels.users.byOid(oId)!.id;
  assert.equal(
    success.map((r) => Object.keys(r).sort()),
    [BRIEF_RECORD_KEYS, BRIEF_RECORD_KEYS],
  );
  assert.equal(
    success.map((r) => [r.userId, r.quality, r.expired]),
    [
      [userId, 'svip', '2030-01-01 00:00:00.000Z'],
      [userId, 'vip', '2030-02-01 00:00:00.000Z'],
    ],
  );
  // read your writes, full records
  const listed = (await list(c, oId)).body.data;
  assert.equal(
    listed.map((r) => [r.id, r.expired]),
    success.map((r) => [r.id, r.expired]),
  );
});

vip('a bad entry does not block the good ones; failures say which and why', async (c) => {
  const oId = '1630399136791';
  const res = await batch(c, oId, [
    { quality: 'vip', expired: '2030-01-01 00:00:00' },
    { quality: 'gold', expired: '2030-01-01 00:00:00' },
    { quality: 'svip', expired: '2025-02-30 00:00:00' },
    'vip',
    { quality: 'svip' },
    { quality: 'svip', expired: '2031-01-01 00:00:00' },
  ]);
  assert.is(res.status, 200, res.text);
  assert.is(res.body.code, 0);
  assert.is(res.body.msg, '4 of 6 entries failed');
  const { success, total, succeed, failed, failures } = res.body.data;
  assert.equal([total, succeed, failed], [6, 2, 4]);
  assert.equal(
    success.map((r) => [r.quality, r.expired]),
    [
      ['vip', '2030-01-01 00:00:00.000Z'],
      ['svip', '2031-01-01 00:00:00.000Z'],
    ],
  );
  assert.equal(failures, [
    { index: 1, quality: 'gold', expired: '2030-01-01 00:00:00', message: 'vips[1].quality: must be "vip" or "svip"' },
    { index: 2, quality: 'svip', expired: '2025-02-30 00:00:00', message: 'vips[2].expired: must be a real date and time written YYYY-MM-DD HH:MM:SS' },
    { index: 3, quality: null, expired: null, message: 'vips[3]: must be a JSON object' },
    { index: 4, quality: 'svip', expired: null, message: 'vips[4].expired: is required' },
  ]);
  assert.equal(
    (await list(c, oId)).body.data.map((r) => r.quality),
    ['svip', 'vip'],
  );
});

vip('a batch where every entry fails writes nothing and still answers 200 with the failures', async (c) => {
  const oId = '1630399136792';
  const res = await batch(c, oId, [{ quality: 'x', expired: '2030-01-01 00:00:00' }, []]);
  assert.is(res.status, 200, res.text);
  assert.equal([res.body.data.total, res.body.data.succeed, res.body.data.failed, res.body.data.success], [2, 0, 2, []]);
  assert.is(res.body.data.failures[1]!.message, 'vips[1]: must be a JSON object');
  assert.equal((await list(c, oId)).body.data, []);
});

vip('a quality given twice in one batch: one record, each entry answered with the expiry it set', async (c) => {
  const res = await batch(c, ALICE.oId, [
    { quality: 'vip', expired: '2040-01-01 00:00:00' },
    { quality: 'vip', expired: '2041-01-01 00:00:00' },
  ]);
  assert.is(res.status, 200, res.text);
  const [a, b] = res.body.data.success;
  assert.is(a!.id, b!.id);
  assert.equal([a!.expired, b!.expired], ['2040-01-01 00:00:00.000Z', '2041-01-01 00:00:00.000Z']);
  const listed = (await list(c, ALICE.oId)).body.data;
  assert.equal(listed.find((r) => r.quality === 'vip')!.expired, '2041-01-01 00:00:00.000Z', 'the last one wins');
});

vip('vips empty, not an array, or over 100 entries is 400 naming vips', async (c) => {
  assertInvalid(await batch(c, ALICE.oId, []), 'vips: must not be empty');
  assertInvalid(await batch(c, ALICE.oId, { quality: 'vip' }), 'vips: must be an array');
  const many = Array.from({ length: 101 }, () => ({ quality: 'vip', expired: '2030-01-01 00:00:00' }));
  assertInvalid(await batch(c, ALICE.oId, many), 'vips: must hold at most 100 entries');
  assertInvalid(await c.h.post('/adm/vip/batch-submit', { oId: ALICE.oId }, c.key), 'vips: is required');
  const hundred = await batch(c, ALICE.oId, many.slice(1));
  assert.is(hundred.status, 200, hundred.text);
  assert.is(hundred.body.data.succeed, 100);
});

vip('concurrent submissions for one user and quality: all accepted, one record, each recorded', async (c) => {
  const oId = '1630399136792';
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => submit(c, oId, 'svip', `2035-01-${String(i + 1).padStart(2, '0')} 00:00:00`)));
  for (const res of answers) assert.is(res.status, 200, res.text);
  assert.is(new Set(answers.map((r) => r.body.data.id)).size, 1, 'one record id');
  const userId = c.h.service.deps.readModels.users.byOid(oId)!.id;
  const events = (await vipEvents(c, userId)).filter((e) => e.data.quality === 'svip');
  assert.equal(
    events.map((e) => e.type),
    ['VipGranted', ...Array(11).fill('VipRenewed')],
  );
  const listed = (await list(c, oId)).body.data;
  assert.is(listed.length, 1);
  assert.is(listed[0]!.expired, `${events.at(-1)!.data.expired.slice(0, 19).replace('T', ' ')}.000Z`, 'the last write wins');
});

vip('records survive a restart: same ids, expiries and timestamps, and a resubmission still keeps the id', async (c) => {
  const before = (await list(c, ALICE.oId)).body.data;
  assert.is(before.length, 2);
  await c.h.restart();
  const after = await list(c, ALICE.oId);
  assert.is(after.status, 200, after.text);
  assert.equal(after.body.data, before);
  const again = await submit(c, ALICE.oId, 'svip', '2050-01-01 00:00:00');
  assert.is(again.body.data.id, before[0]!.id);
  assert.is(again.body.data.created, before[0]!.created);
});

vip.run();
