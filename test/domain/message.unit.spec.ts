// A pushed message is recorded once under its id.
import { test } from 'uvu';
import { ConflictError } from '../../src/domain/errors.js';
import type { MessagePushed } from '../../src/domain/events.js';
import { messageDecider, type PushMessage } from '../../src/domain/message.js';
import { deciderSpec } from '../support/given.js';

const message = deciderSpec(messageDecider);
const data: MessagePushed['data'] = { messageId: 'm1', name: 'gift', data: { gold: 100 }, oIds: ['42'], userIds: [], at: '2026-11-23T12:00:00.000Z', appId: 'game', keyId: 'k1' };
const push: PushMessage = { type: 'PushMessage', ...data };

test('a push records the message, once', () => {
  message.given().when(push).then([{ type: 'MessagePushed', data }]);
  message.given([{ type: 'MessagePushed', data }]).when(push).thenThrows(ConflictError);
});

test.run();
