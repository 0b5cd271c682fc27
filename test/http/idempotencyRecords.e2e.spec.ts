// What an Idempotency-Key leaves in the log: nothing for a request refused for its input, a stream
// that is deleted once the key has expired, and a kept answer of bounded size.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness, withHarness, type Harness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';

const head = (h: Harness) => h.service.deps.store.headPosition();

test('a request refused for its input (400) with an Idempotency-Key records nothing', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key();
    const before = await head(h);
    const refused = [
      await h.request('POST', '/adm/vip/submit', {
        body: { oId: ALICE.oId, quality: 'gold', expired: '2030-01-01 00:00:00' },
        apiKey: key,
        headers: { 'Idempotency-Key': 'bad-1' },
      }),
      await h.request('POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 'ten', memo: 'm' }, apiKey: key, headers: { 'Idempotency-Key': 'bad-2' } }),
      await h.request('POST', '/adm/message/push', { body: { name: 'n', data: {} }, apiKey: key, headers: { 'Idempotency-Key': 'bad-3' } }),
    ];
    for (const answer of refused) assert.is(answer.status, 400, answer.text);
    assert.is(await head(h), before, 'the log did not move');
    // The same key with a valid request is a new request, not a reuse.
    const valid = await h.request('POST', '/adm/vip/submit', {
      body: { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' },
      apiKey: key,
      headers: { 'Idempotency-Key': 'bad-1' },
    });
    assert.is(valid.status, 200, valid.text);
  } finally {
    await h.close();
  }
});

test("an Idempotency-Key's stream is deleted once the key has expired, and the key is free again", async () => {
  const clock = movableClock();
  const h = await startHarness({ env: { IDEMPOTENCY_TTL_HOURS: '1' }, clock });
  try {
    const { key } = await h.key();
    const body = { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' };
    const first = await h.request('POST', '/adm/vip/submit', { body, apiKey: key, headers: { 'Idempotency-Key': 'short-lived' } });
    assert.is(first.status, 200, first.text);
    assert.is((await h.events('idempotency-')).length, 2, 'claimed and answered');
    clock.advance(3_600_000 + 1000);
    // Something after it, so that the key's stream does not hold the log's newest event.
    await h.request('POST', '/adm/vip/submit', { body: { ...body, quality: 'svip' }, apiKey: key });
    assert.ok((await h.service.retention.runOnce()) >= 1);
    assert.equal(await h.events('idempotency-'), [], 'the key stream is gone');
    assert.is(h.service.deps.readModels.idempotency.get((await h.events())[0]!.streamName), undefined);
    const again = await h.request('POST', '/adm/vip/submit', { body, apiKey: key, headers: { 'Idempotency-Key': 'short-lived' } });
    assert.is(again.status, 200, again.text);
    assert.is(again.headers.get('idempotent-replayed'), null, 'an expired key runs again');
  } finally {
    await h.close();
  }
});

test('a push to thousands of ids keeps a bounded answer for its key, with the full counts', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    const userIds = Array.from({ length: 3000 }, (_, i) => `unknown-user-${i}`);
    const headers = { 'Idempotency-Key': 'big-push' };
    const first = await h.request('POST', '/adm/message/push', { body: { userIds, name: 'n', data: {} }, apiKey: key, headers });
    assert.is(first.status, 200, first.text);
    assert.is(first.body.data.unknown.length, 3000, 'the first answer lists every id');
    const [completed] = (await h.events('idempotency-')).filter((e) => e.type === 'IdempotentRequestCompleted');
    assert.ok(JSON.stringify(completed!.data).length < 8000, `kept ${JSON.stringify(completed!.data).length} characters`);
    const again = await h.request('POST', '/adm/message/push', { body: { userIds, name: 'n', data: {} }, apiKey: key, headers });
    assert.is(again.headers.get('idempotent-replayed'), 'true');
    assert.is(again.body.data.unknown.length, 100);
    assert.equal(again.body.data.counts, { online: 0, offline: 0, unknown: 3000 });
  }));

test.run();
