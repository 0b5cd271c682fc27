// The user actor on its own: a live message is one event for the user and one frame, in log
// order; a message at or below the last one emitted is dropped; CLOSE ends it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, initialTransition, transition } from 'xstate';
import type { Frame } from '../../src/realtime/clientActor.js';
import type { PushedMessage } from '../../src/realtime/messages.js';
import { userActorLogic } from '../../src/realtime/userActor.js';

const message = (position: number): PushedMessage => ({ type: 'MESSAGE', position, appId: 'game-one', name: 'reward', data: { points: 5 } });

/** A started user actor and the frames it emitted so far. */
function started() {
  const actor = createActor(userActorLogic);
  const frames: Frame[] = [];
  actor.on('message', (frame) => frames.push(frame));
  actor.start();
  return { actor, frames };
}

test('a MESSAGE emits one message frame {app_id, name, data}, its id the event position', () => {
  const { actor, frames } = started();
  actor.send(message(9));
  assert.is(actor.getSnapshot().value, 'open');
  assert.is(actor.getSnapshot().context.lastId, 9);
  assert.equal(frames, [{ type: 'message', id: 9, data: { app_id: 'game-one', name: 'reward', data: { points: 5 } } }]);
});

test('a MESSAGE at or below the last one emitted is dropped', () => {
  const { actor, frames } = started();
  for (const position of [9, 9, 8, 10]) actor.send(message(position));
  assert.equal(
    frames.map((frame) => (frame.type === 'message' ? frame.id : undefined)),
    [9, 10],
  );
  const [after9] = transition(userActorLogic, transition(userActorLogic, initialTransition(userActorLogic)[0], message(9))[0], message(8));
  assert.is(after9.context.lastId, 9);
});

test('CLOSE reaches the final state; nothing is emitted after it', () => {
  const [closed] = transition(userActorLogic, initialTransition(userActorLogic)[0], { type: 'CLOSE' });
  assert.is(closed.status, 'done');
  assert.is(closed.value, 'closed');
  const { actor, frames } = started();
  actor.send({ type: 'CLOSE' });
  assert.is(actor.getSnapshot().status, 'done');
  actor.send(message(50));
  assert.equal(frames, []);
});

test.run();
