// Attack: one app pushes to tens of thousands of users at once, several pushes at a time, so that
// every other app's requests wait behind its fan-out. A push names at most PUSH_MAX_RECIPIENTS
// (400 naming the field and the bound, nothing recorded); an app pushes to at most
// PUSH_RECIPIENTS_PER_SECOND recipients per second on a node (429 with Retry-After, decided
// before the body is read, pushes arriving together included); another app is not held back. (How far one app's pushes move
// another's reads is the push-fairness bench.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startHarness } from '../support/harness.js';

const oIdsOf = (count: number) => Array.from({ length: count }, (_, i) => String(1_700_000_000_000 + i));
const push = (oIds: string[], userIds: string[] = []) => ({ oIds, userIds, name: 'many', data: {} });

test('a push past PUSH_MAX_RECIPIENTS (oIds and userIds together) is a 400 naming the field and the bound; at the bound it is accepted', async () => {
  const h = await startHarness({ env: { PUSH_MAX_RECIPIENTS: '50' } });
  try {
    const { key } = await h.key(['message:push']);
    const before = (await h.events('message-')).length;
    const over = await h.post(
      '/adm/message/push',
      push(
        oIdsOf(40),
        Array.from({ length: 11 }, (_, i) => `u${i}`),
      ),
      key,
    );
    assert.is(over.status, 400, over.text);
    assert.equal(over.body.data.issues, [
      { field: 'oIds', message: 'names 51 recipients (oIds and userIds together); a push reaches at most 50: push to larger audiences in several pushes' },
    ]);
    const userIdsOnly = await h.post(
      '/adm/message/push',
      push(
        [],
        Array.from({ length: 51 }, (_, i) => `u${i}`),
      ),
      key,
    );
    assert.is(userIdsOnly.body.data.issues[0].field, 'userIds');
    assert.is((await h.events('message-')).length, before, 'nothing recorded');
    const atBound = await h.post('/adm/message/push', push(oIdsOf(50)), key);
    assert.is(atBound.status, 200, atBound.text);
    assert.is(atBound.body.data.unknown.length, 50);
  } finally {
    await h.close();
  }
});

test('the default bound is 10,000 recipients, and the document says so', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['message:push']);
    const over = await h.post('/adm/message/push', push(oIdsOf(10_001)), key);
    assert.is(over.status, 400);
    assert.match(over.body.data.issues[0].message, /at most 10000/);
    const document = (await h.get('/openapi.json')).body;
    assert.match(document.paths['/adm/message/push'].post.description, /at most 10000 recipients/);
  } finally {
    await h.close();
  }
});

test('past PUSH_RECIPIENTS_PER_SECOND the app gets 429 with the wait, before its body is read; another app is not affected', async () => {
  const h = await startHarness({ env: { PUSH_RECIPIENTS_PER_SECOND: '1', PUSH_MAX_RECIPIENTS: '20' } });
  try {
    const a = await h.key(['message:push'], 'app-a');
    const b = await h.key(['message:push'], 'app-b');
    // A full bucket takes one push at the largest size, and the next goes into debt...
    assert.is((await h.post('/adm/message/push', push(oIdsOf(20)), a.key)).status, 200);
    assert.is((await h.post('/adm/message/push', push(oIdsOf(20)), a.key)).status, 200);
    // ...which the one after waits out.
    const refused = await h.request('POST', '/adm/message/push', { raw: '{not json', apiKey: a.key });
    assert.is(refused.status, 429, refused.text);
    assert.is(refused.body.data.reason, 'rate_limited');
    assert.ok(refused.body.data.retryAfterSeconds >= 19, `waits for the debt (${refused.body.data.retryAfterSeconds} s)`);
    assert.match(refused.body.message, /this app may push to 1 per second on this node \(PUSH_RECIPIENTS_PER_SECOND\)/);
    assert.is((await h.post('/adm/message/push', push(oIdsOf(20)), b.key)).status, 200, "another app's budget is its own");
  } finally {
    await h.close();
  }
});

test('pushes arriving together cannot all pass a full bucket: each takes what its size could name until its body is read', async () => {
  const h = await startHarness({ env: { PUSH_RECIPIENTS_PER_SECOND: '1', PUSH_MAX_RECIPIENTS: '20' } });
  try {
    const a = await h.key(['message:push'], 'app-a');
    const statuses = await Promise.all(Array.from({ length: 8 }, () => h.post('/adm/message/push', push(oIdsOf(20)), a.key).then((r) => r.status)));
    assert.equal(statuses.sort(), [200, 200, 429, 429, 429, 429, 429, 429], 'the full bucket, and one push into debt');
  } finally {
    await h.close();
  }
});

test('small pushes give back what their size reserved: a burst of 1:1 pushes all pass', async () => {
  const h = await startHarness({ env: { PUSH_RECIPIENTS_PER_SECOND: '100', PUSH_MAX_RECIPIENTS: '1000' } });
  try {
    const a = await h.key(['message:push'], 'app-a');
    for (let round = 0; round < 3; round++) {
      const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => h.post('/adm/message/push', push(oIdsOf(i + 1).slice(i)), a.key).then((r) => r.status)));
      assert.equal(statuses, Array(20).fill(200), `round ${round + 1}`);
    }
  } finally {
    await h.close();
  }
});

test.run();
