// Answers that do not tell what happened are never read as "nothing happened": a push whose
// append landed but was reported failed is not delivered again by its retry, and an item
// deduction whose bag did not move by exactly its sum is an unknown outcome, not a refusal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventStore } from '../../src/store/port.js';
import { eventually } from '../support/eventually.js';
import { FaultyStore } from '../support/faultyStore.js';
import { ALICE, startHarness } from '../support/harness.js';

test('a push retried after an append that landed but was reported failed is recorded, and so delivered, once', async () => {
  let faulty: FaultyStore | undefined;
  const h = await startHarness({ wrapStore: (store: EventStore) => (faulty = new FaultyStore(store)) });
  try {
    const { key } = await h.key();
    const body = { oIds: [ALICE.oId], name: 'ambiguous', data: { n: 1 } };
    const headers = { 'Idempotency-Key': 'push-ambiguous' };
    faulty!.landThenFail = { streams: /^message-/, error: new Error('disk I/O error') };
    const first = await h.request('POST', '/adm/message/push', { body, apiKey: key, headers });
    faulty!.landThenFail = undefined;
    assert.ok(first.status >= 500, `the first attempt is told it failed: ${first.status} ${first.text}`);
    const retry = await h.request('POST', '/adm/message/push', { body, apiKey: key, headers });
    assert.is(retry.status, 200, retry.text);
    const pushed = (await h.events('message-')).filter((e) => e.type === 'MessagePushed');
    assert.is(pushed.length, 1, `recorded ${pushed.length} times`);
  } finally {
    await h.close();
  }
});

test('an item deduction whose bag moved by something else than its sum (a concurrent edit) is an unknown outcome', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key();
    h.sim.updateUser(ALICE.oId, { items: { gem: 5 } });
    // The deduction reaches the platform late; meanwhile someone else adds exactly as much.
    h.sim.faultNext('/user/edit/items', { kind: 'delayThenApply', ms: 500 });
    const deduction = h.post('/adm/items/edit', { oId: ALICE.oId, item: 'gem', sum: -2 }, key);
    await eventually(() => h.sim.arrivals('/user/edit/items').length > 0, { what: 'the deduction reached the platform' });
    h.sim.updateUser(ALICE.oId, { items: { gem: 7 } });
    const answer = await deduction;
    assert.equal(h.sim.user(ALICE.oId)!.items, { gem: 5 }, 'the platform deducted it');
    assert.is(answer.status, 502, answer.text);
    assert.match(answer.body.message, /^Outcome unknown: /);
    const outcomes = (await h.events('operation-')).map((e) => e.type);
    assert.equal(outcomes, ['ItemsEditRequested', 'OperationOutcomeUnknown']);
  } finally {
    await h.close();
  }
});

test.run();
