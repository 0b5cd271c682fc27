// A pushed message is recorded once under its id.
import { test } from 'uvu';
import type { MessagePushed } from '../../src/domain/events.js';
import { messageDecider, type PushMessage } from '../../src/domain/message.js';
import { deciderSpec } from '../support/deciderSpec.js';

const message = deciderSpec(messageDecider);
const data: MessagePushed['data'] = { messageId: 'm1', name: 'gift', data: { gold: 100 }, oIds: ['42'], userIds: [], at: '2026-11-23T12:00:00.000Z', appId: 'game', keyId: 'k1' };
const push: PushMessage = { type: 'PushMessage', ...data };

test('a push records the message, once', () => {
  message
    .given()
    .when(push)
    .then([{ type: 'MessagePushed', data }]);
  // A retry of the same key's use finds it recorded: nothing more is recorded (nor delivered).
  message
    .given([{ type: 'MessagePushed', data }])
    .when(push)
    .then([]);
});

test.run();
