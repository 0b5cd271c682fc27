// The user machine on its own: pure `transition` calls. A live message is one event for the user
// and one frame, in log order; a message at or below the last one emitted is dropped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { initialTransition, transition } from 'xstate';
import type { Frame } from '../../src/realtime/clientMachine.js';
import type { MessageEvent } from '../../src/realtime/messages.js';
import { userMachine } from '../../src/realtime/userMachine.js';

const frames = (actions: Array<{ type: string; params?: unknown }>): Frame[] =>
  actions.filter((a) => a.type === 'xstate.emit').map((a) => (a.params as { event: Frame }).event);
const open = () => initialTransition(userMachine)[0];
const message = (position: number): MessageEvent => ({ type: 'MESSAGE', position, appId: 'game-one', name: 'reward', data: { points: 5 } });

test('a MESSAGE emits one message frame {app_id, name, data}, its id the event position', () => {
  const [next, actions] = transition(userMachine, open(), message(9));
  assert.is(next.value, 'open');
  assert.is(next.context.lastId, 9);
  assert.equal(frames(actions), [{ type: 'message', id: 9, data: { app_id: 'game-one', name: 'reward', data: { points: 5 } } }]);
});

test('a MESSAGE at or below the last one emitted is dropped', () => {
  const [after9] = transition(userMachine, open(), message(9));
  assert.equal(frames(transition(userMachine, after9, message(9))[1]), []);
  assert.equal(frames(transition(userMachine, after9, message(8))[1]), []);
  assert.equal(frames(transition(userMachine, after9, message(10))[1]).length, 1);
});

test('CLOSE reaches the final state; nothing is emitted after it', () => {
  const [closed] = transition(userMachine, open(), { type: 'CLOSE' });
  assert.is(closed.status, 'done');
  assert.equal(frames(transition(userMachine, closed, message(50))[1]), []);
});

test.run();
