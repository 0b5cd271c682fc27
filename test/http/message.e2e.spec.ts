// docs/api.md "POST /adm/message/push": a push is accepted ({code:0,msg}) and recorded as one MessagePushed event carrying
// the sending application; delivery to connected clients follows the store (realtime issue).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { MessagePushed } from '../../src/domain/events.js';
import type { RecordedEvent } from '../../src/store/port.js';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';

type Ctx = { h: Harness; key: string; keyId: string };

const push = suite<Ctx>('message push');

push.before(async (context) => {
  context.h = await startHarness();
  const { key, id } = await context.h.key(['message:push'], 'Game One');
  context.key = key;
  context.keyId = id;
});
push.after(async ({ h }) => {
  await h?.close();
});

async function pushedAfter(h: Harness, count: number): Promise<Array<RecordedEvent & MessagePushed>> {
  return (await h.events('message-')).slice(count) as Array<RecordedEvent & MessagePushed>;
}

push('push to oIds answers {code:0,msg:"success",data:<delivery report>} and records one MessagePushed with the app, key, name, data and targets', async (c) => {
  const count = (await c.h.events('message-')).length;
  const data = { kind: 'reward', amount: 5, nested: { list: [1, 'two', null], flag: true } };
  const res = await c.h.post('/adm/message/push', { oIds: [ALICE.oId, BOB.oId], name: 'game-event', data }, c.key);
  assert.is(res.status, 200, res.text);
  assert.is(res.text, `{"code":0,"msg":"success","data":{"online":[],"offline":[],"unknown":["${ALICE.oId}","${BOB.oId}"]}}`, 'no user the service knows yet');
  const events = await pushedAfter(c.h, count);
  assert.is(events.length, 1);
  const [event] = events as [RecordedEvent & MessagePushed];
  assert.is(event.type, 'MessagePushed');
  assert.is(event.streamName, `message-${event.data.messageId}`);
  assert.match(event.data.messageId, /^[a-z0-9]{15}$/);
  assert.equal(
    { ...event.data, messageId: undefined, at: undefined },
    {
      messageId: undefined,
      at: undefined,
      appId: 'game-one',
      keyId: c.keyId,
      name: 'game-event',
      data,
      oIds: [ALICE.oId, BOB.oId],
      userIds: [],
    },
  );
  assert.match(event.data.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

push('push to userIds alone, and to both, is accepted and recorded as given', async (c) => {
  const count = (await c.h.events('message-')).length;
  const one = await c.h.post('/adm/message/push', { userIds: ['abcdefghij12345'], name: 'dm', data: {} }, c.key);
  assert.equal([one.status, one.body], [200, { code: 0, msg: 'success', data: { online: [], offline: [], unknown: ['abcdefghij12345'] } }]);
  const both = await c.h.post('/adm/message/push', { oIds: [ALICE.oId], userIds: ['abcdefghij12345'], name: 'both', data: { x: 1 } }, c.key);
  assert.equal([both.status, both.body.data.unknown], [200, [ALICE.oId, 'abcdefghij12345']]);
  const events = await pushedAfter(c.h, count);
  assert.equal(
    events.map((e) => [e.type, e.data.name, e.data.oIds, e.data.userIds, e.data.data]),
    [
      ['MessagePushed', 'dm', [], ['abcdefghij12345'], {}],
      ['MessagePushed', 'both', [ALICE.oId], ['abcdefghij12345'], { x: 1 }],
    ],
  );
  assert.is.not(events[0]!.data.messageId, events[1]!.data.messageId, 'each push is its own message');
});

push('a push does not look users up on the platform (only signed-in users can receive it)', async (c) => {
  const lookups = c.h.sim.calls('/api/user/getInfoById');
  const res = await c.h.post('/adm/message/push', { oIds: ['9999999999999'], name: 'n', data: {} }, c.key);
  assert.is(res.status, 200, res.text);
  assert.is(c.h.sim.calls('/api/user/getInfoById'), lookups);
  assert.equal(await c.h.events('user-'), []);
});

push('the app id is that of the key that pushed', async (c) => {
  const other = await c.h.key(['message:push'], 'Second Game!');
  const count = (await c.h.events('message-')).length;
  await c.h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'n', data: {} }, other.key);
  const [event] = await pushedAfter(c.h, count);
  assert.equal([event!.data.appId, event!.data.keyId], ['second-game', other.id]);
});

push.run();
