// A request's writes land only while it holds its Idempotency-Key claim. Each write here is held
// at its append (a process stalled at that step) until a retry, once the claim is stale, has
// taken the key over; released, it fails whole with 409 and leaves nothing in the log.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventStore } from '../../src/store/port.js';
import { eventually } from '../support/eventually.js';
import { FaultyStore } from '../support/faultyStore.js';
import { ALICE, startHarness, type Answer, type Harness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';

const STALE_MS = 1500;

async function fencedHarness() {
  let faulty: FaultyStore | undefined;
  const clock = movableClock();
  const h = await startHarness({ clock, env: { IDEMPOTENCY_CLAIM_STALE_MS: String(STALE_MS) }, wrapStore: (store: EventStore) => (faulty = new FaultyStore(store)) });
  return { h, faulty: faulty!, clock };
}

/** Sends the request twice with one key: the first held at its append until the second has run. */
async function stalledAndRetried(c: Awaited<ReturnType<typeof fencedHarness>>, streams: RegExp, send: () => Promise<Answer>) {
  const hold = c.faulty.holdAppends(streams);
  const claims = async () => (await c.h.events('idempotency-')).filter((e) => e.type === 'IdempotentRequestStarted').length;
  const before = await claims();
  const stalled = send();
  await hold.arrived;
  c.clock.advance(STALE_MS + 1000);
  // The retry takes the key over; its own write then waits behind the stalled one.
  const retry = send();
  await eventually(async () => (await claims()) === before + 2, { what: 'the retry has taken the key over' });
  hold.release();
  return { stalled: await stalled, retry: await retry };
}

const count = async (h: Harness, prefix: string, type: string) => (await h.events(prefix)).filter((e) => e.type === type).length;

test('a push whose claim was taken over while its append waited answers 409 and is recorded once, by the retry', async () => {
  const c = await fencedHarness();
  try {
    const { key } = await c.h.key();
    const body = { oIds: [ALICE.oId], name: 'fenced', data: {} };
    const { stalled, retry } = await stalledAndRetried(c, /^message-/, () =>
      c.h.request('POST', '/adm/message/push', { body, apiKey: key, headers: { 'Idempotency-Key': 'fenced-push' } }),
    );
    assert.is(stalled.status, 409, stalled.text);
    assert.match(stalled.body.message, /lost its claim .*nothing was written/);
    assert.is(retry.status, 200, retry.text);
    assert.is(await count(c.h, 'message-', 'MessagePushed'), 1);
  } finally {
    await c.h.close();
  }
});

test('a VIP submit whose claim was taken over while its append waited answers 409 and writes nothing', async () => {
  const c = await fencedHarness();
  try {
    const { key } = await c.h.key();
    const body = { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' };
    const { stalled, retry } = await stalledAndRetried(c, /^vip-/, () =>
      c.h.request('POST', '/adm/vip/submit', { body, apiKey: key, headers: { 'Idempotency-Key': 'fenced-vip' } }),
    );
    assert.is(stalled.status, 409, stalled.text);
    assert.is(retry.status, 200, retry.text);
    assert.is(await count(c.h, 'vip-', 'VipGranted'), 1);
    assert.is(await count(c.h, 'vip-', 'VipRenewed'), 0);
  } finally {
    await c.h.close();
  }
});

test('a resolution whose claim was taken over while its append waited answers 409 and writes nothing', async () => {
  const c = await fencedHarness();
  try {
    const { key } = await c.h.key();
    c.h.sim.faultNext('/user/edit/points', { kind: 'hang' });
    const unknown = await c.h.post('/adm/points/edit', { oId: ALICE.oId, point: 1, memo: 'fenced-resolve' }, key);
    assert.is(unknown.status, 504, unknown.text);
    const operationId = unknown.body.data.operationId as string;
    const { stalled, retry } = await stalledAndRetried(c, /^operation-/, () =>
      c.h.request('POST', `/adm/operations/${operationId}/resolve`, { body: { applied: true, note: 'seen' }, apiKey: key, headers: { 'Idempotency-Key': 'fenced-resolve' } }),
    );
    assert.is(stalled.status, 409, stalled.text);
    assert.match(stalled.body.message, /lost its claim/);
    assert.is(retry.status, 200, retry.text);
    assert.is(await count(c.h, 'operation-', 'OperationResolved'), 1);
  } finally {
    await c.h.close();
  }
});

test.run();
