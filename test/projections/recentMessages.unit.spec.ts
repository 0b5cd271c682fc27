// The replay window's read model without HTTP: its byte bound drops the oldest messages first,
// its count bound still holds, and a message's age is judged on the injected clock against the
// time the log recorded.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MessagePushed } from '../../src/domain/events.js';
import { MESSAGE_OVERHEAD_BYTES, RECIPIENT_BYTES, RecentMessagesReadModel, type RecentMessagesOptions } from '../../src/projections/recentMessages.js';
import { UsersReadModel } from '../../src/projections/users.js';
import type { RecordedEvent } from '../../src/store/port.js';

const T0 = Date.parse('2020-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const TEXT = 'x'.repeat(60_000);

/** A model on a clock the test moves, far from the real time. */
function model(options: Partial<RecentMessagesOptions> = {}) {
  let now = T0;
  const messages = new RecentMessagesReadModel({ users: new UsersReadModel(), clock: { now: () => iso(now) }, retentionMs: 600_000, ...options });
  let position = 0;
  return {
    messages,
    /** Records a push to user u1 made at `now`; its position. */
    push(data: Record<string, unknown> = { text: TEXT }, userIds = ['u1']): number {
      const pushed: MessagePushed['data'] = { messageId: `m${++position}`, name: 'n', data, oIds: [], userIds, at: iso(now), appId: 'game-one', keyId: 'k1' };
      const recorded: RecordedEvent = {
        streamName: `message-m${position}`,
        revision: 0,
        position: position * 10,
        type: 'MessagePushed',
        data: pushed,
        metadata: undefined,
        created: iso(now),
      };
      messages.apply(recorded);
      return recorded.position;
    },
    advance(ms: number) {
      now += ms;
    },
  };
}

const bytesOf = (data: Record<string, unknown>, recipients = 1) => JSON.stringify(data).length + MESSAGE_OVERHEAD_BYTES + RECIPIENT_BYTES * recipients;
const positions = (m: RecentMessagesReadModel, userId = 'u1') => m.forUserAfter(userId, 0).map((message) => message.position);

test('each message counts its data as JSON plus the stated overheads, one per recipient', () => {
  const { messages, push } = model();
  push({ text: TEXT });
  push({ a: 1 }, ['u1', 'u2', 'u3']);
  assert.is(messages.heldBytes, bytesOf({ text: TEXT }) + bytesOf({ a: 1 }, 3));
  assert.equal(
    messages.forUserAfter('u1', 0).map((m) => m.bytes),
    [bytesOf({ text: TEXT }), bytesOf({ a: 1 }, 3)],
  );
});

test('past the byte bound the oldest messages are dropped first, whatever their age', () => {
  const one = bytesOf({ text: TEXT });
  const { messages, push } = model({ maxBytes: 3 * one + 100 });
  const pushed = [push(), push(), push()];
  assert.equal(positions(messages), pushed);
  pushed.push(push());
  assert.equal(positions(messages), pushed.slice(1), 'the first went when the fourth came');
  pushed.push(push(), push());
  assert.equal(positions(messages), pushed.slice(3));
  assert.is(messages.size, 3);
  assert.is(messages.heldBytes, 3 * one);
  // Small messages fit where a large one went: the bound is on bytes, not on count.
  const small = [push({ a: 1 }), push({ a: 2 })];
  assert.equal(positions(messages), [...pushed.slice(4), ...small]);
  assert.ok(messages.heldBytes <= 3 * one + 100);
});

test('the bound is on the sum over every user: one user’s messages can push out another’s', () => {
  const one = bytesOf({ text: TEXT });
  const { messages, push } = model({ maxBytes: 2 * one });
  const forBob = push({ text: TEXT }, ['u2']);
  const forAlice = [push(), push()];
  assert.equal(positions(messages, 'u2'), [], `Bob's message (${forBob}) went first`);
  assert.equal(positions(messages), forAlice);
});

test('a message larger than the whole bound is not kept, and pushes out nothing', () => {
  const { messages, push } = model({ maxBytes: 1000 });
  const small = push({ a: 1 });
  push({ text: TEXT });
  assert.equal(positions(messages), [small]);
  assert.is(messages.heldBytes, bytesOf({ a: 1 }));
});

test('the count bound still holds', () => {
  const { messages, push } = model({ maxMessages: 2 });
  const pushed = [push({ a: 1 }), push({ a: 2 }), push({ a: 3 })];
  assert.equal(positions(messages), pushed.slice(1));
  assert.is(messages.heldBytes, bytesOf({ a: 2 }) + bytesOf({ a: 3 }));
});

test('age is judged on the injected clock against the recorded time, not on the machine clock', () => {
  const { messages, push, advance } = model({ retentionMs: 60_000 });
  // The model's clock reads 2020: by the machine's clock these are years old, and still kept.
  const first = push({ a: 1 });
  advance(30_000);
  const second = push({ a: 2 });
  assert.equal(positions(messages), [first, second]);
  advance(30_001);
  assert.equal(positions(messages), [second], 'the first is out of the window on the model clock');
  assert.is(messages.heldBytes, bytesOf({ a: 2 }));
  advance(30_000);
  assert.equal(positions(messages), []);
  assert.is(messages.heldBytes, 0);
});

test.run();
