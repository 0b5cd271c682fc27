// Attack: one push with `data` nested thousands of levels deep used to be stored, then overflow
// the stack while its frame was formatted and end the process — again after every restart, as
// the browser reconnected with Last-Event-ID and had it replayed. Deeper bodies answered 500.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { streams } from '../../src/domain/events.js';
import { newRecordId } from '../../src/system/ids.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';

const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
const pushBody = (dataJson: string) => `{"oIds":["${ALICE.oId}"],"name":"deep","data":${dataJson}}`;

async function stillServes(h: Harness, key: string) {
  assert.is((await h.get('/healthz')).status, 200);
  const ok = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'fine', data: { n: 1 } }, key);
  assert.is(ok.status, 200, ok.text);
}

test('pushes with data nested 1,000 to 20,000 levels deep are refused with 400 naming data and the limit; the node keeps serving', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['message:push']);
    for (const depth of [33, 1_000, 4_100, 10_000, 20_000]) {
      const res = await h.request('POST', '/adm/message/push', { raw: pushBody(nested(depth)), apiKey: key });
      assert.is(res.status, 400, `depth ${depth}: ${res.text}`);
      assert.match(res.body.message, /^data: must be nested at most 32 levels deep/);
      await stillServes(h, key);
    }
    const atLimit = await h.request('POST', '/adm/message/push', { raw: pushBody(nested(32)), apiKey: key });
    assert.is(atLimit.status, 200, atLimit.text);
    assert.is((await h.events('message-')).length, 5 + 1, 'only the fitting pushes were stored');
  } finally {
    await h.close();
  }
});

test('deep bodies never answer 500: deep arrays, deep values in other fields and other routes, with an Idempotency-Key', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['*']);
    const deepArray = '['.repeat(20_000) + ']'.repeat(20_000);
    const attempts: Array<[string, string, Record<string, string>]> = [
      ['/adm/message/push', deepArray, {}],
      ['/adm/message/push', `{"oIds":${deepArray},"name":"x","data":{}}`, {}],
      ['/adm/message/push', pushBody(nested(20_000)), { 'Idempotency-Key': 'deep-1' }],
      ['/adm/points/edit', `{"oId":"${ALICE.oId}","point":1,"memo":${deepArray}}`, { 'Idempotency-Key': 'deep-2' }],
      ['/adm/vip/batch-submit', `{"oId":"${ALICE.oId}","vips":${deepArray}}`, {}],
    ];
    for (const [path, raw, headers] of attempts) {
      const res = await h.request('POST', path, { raw, apiKey: key, headers });
      assert.is(res.status, 400, `${path}: ${res.text}`);
      assert.match(res.body.message, /must be nested at most \d+ levels deep/);
    }
    await stillServes(h, key);
  } finally {
    await h.close();
  }
});

test('data larger than 64 KiB as JSON is refused with 400 naming data and the limit; the limits are configurable', async () => {
  const h = await startHarness({ env: { PUSH_MAX_BYTES: '1024', PUSH_MAX_DEPTH: '3' } });
  try {
    const { key } = await h.key(['message:push']);
    const big = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'big', data: { text: 'x'.repeat(1024) } }, key);
    assert.is(big.status, 400, big.text);
    assert.is(big.body.message, 'data: must be at most 1024 bytes as JSON');
    const deep = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'deep', data: { a: { b: { c: 1 } } } }, key);
    assert.is(deep.status, 200, deep.text);
    const deeper = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'deep', data: { a: { b: { c: {} } } } }, key);
    assert.is(deeper.status, 400, deeper.text);
    assert.is(deeper.body.message, 'data: must be nested at most 3 levels deep');
  } finally {
    await h.close();
  }
  const defaults = await startHarness();
  try {
    const { key } = await defaults.key(['message:push']);
    const text = 'x'.repeat(64 * 1024);
    const big = await defaults.post('/adm/message/push', { oIds: [ALICE.oId], name: 'big', data: { text } }, key);
    assert.is(big.status, 400, big.text);
    assert.is(big.body.message, 'data: must be at most 65536 bytes as JSON');
  } finally {
    await defaults.close();
  }
});

test('a stored message too deep to format (written by an older version) is skipped, live and on a Last-Event-ID replay, across a restart; the node stays up', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['message:push'], 'game-one');
    const popup = await connect(h);
    const cookie = await signIn(h, popup.clientId, ALICE.oId);
    await popup.stream.next('login');
    const before = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'before', data: {} }, key);
    assert.is(before.status, 200, before.text);
    const seen = await popup.stream.next('message');

    const messageId = newRecordId();
    const at = new Date().toISOString();
    const data = JSON.parse(nested(4_000)) as Record<string, unknown>;
    await h.service.deps.store.append(streams.message(messageId), [
      { type: 'MessagePushed', data: { messageId, name: 'poison', data, oIds: [ALICE.oId], userIds: [], at, appId: 'game-one', keyId: 'old' } },
    ]);
    assert.is((await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'after', data: {} }, key)).status, 200);
    assert.is((await popup.stream.next('message')).data.name, 'after', 'the live stream skipped the poison and goes on');
    popup.stream.close();

    await h.restart();
    const back = await connect(h, { cookie, lastEventId: seen.id });
    assert.is((await back.stream.next('message')).data.name, 'after', 'the replay skipped the poison');
    assert.is((await h.get('/healthz')).status, 200);
    const live = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'live', data: {} }, key);
    assert.is(live.status, 200);
    assert.is((await back.stream.next('message')).data.name, 'live');
    back.stream.close();
  } finally {
    await h.close();
  }
});

test.run();
