// The realtime client's machine on its own (docs/architecture.md, "Realtime"): xstate's pure `initialTransition` and
// `transition` calls, no actor, no socket. Every transition is checked for the state it reaches
// and the frames it emits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, initialTransition, StateMachine, transition } from 'xstate';
import { clientActorLogic, type ClientActorEvent, type ClientInput, type Frame } from '../../src/realtime/clientActor.js';
import type { SpecUser } from '../../src/realtime/specUser.js';

const user = (oId = '1630399136785'): SpecUser => ({
  id: 'u1a2b3c4d5e6f7g',
  oId,
  name: 'alice',
  nickname: 'Alice',
  avatar: 'https://example.test/alice.png',
  email: '',
  emailVisibility: false,
  verified: true,
  collectionId: '_pb_users_auth_',
  collectionName: 'users',
  created: '2026-01-02 03:04:05.678Z',
  updated: '2026-01-02 03:04:05.678Z',
});

/** The frames a step emits: the `xstate.emit` actions' events, in order (as xstate's own tests read them). */
function frames(actions: Array<{ type: string; params?: unknown }>): Frame[] {
  return actions.filter((a) => a.type === 'xstate.emit').map((a) => (a.params as { event: Frame }).event);
}

/** The first step of the actor the hub starts for this input. */
const start = (input: ClientInput) => initialTransition(clientActorLogic, input);
const anonymous = () => start({ clientId: 'client-1', position: 7 })[0];
const signedIn = () => start({ clientId: 'client-1', position: 7, session: { user: user(), sessionId: 's1' } })[0];
const step = (snapshot: ReturnType<typeof anonymous>, event: ClientActorEvent) => {
  const [next, actions] = transition(clientActorLogic, snapshot, event);
  return { next, frames: frames(actions) };
};
const message = (position: number, name = 'reward'): ClientActorEvent => ({ type: 'MESSAGE', position, appId: 'game-one', name, data: { points: 5 } });

test('a state machine: anonymous, signedIn and the final state closed', () => {
  assert.ok(clientActorLogic instanceof StateMachine);
  assert.equal(Object.keys(clientActorLogic.root.states), ['anonymous', 'signedIn', 'closed']);
  assert.is(clientActorLogic.root.states.closed!.type, 'final');
});

test('without a session it starts anonymous and emits PB_CONNECT with login_status false', () => {
  const [snapshot, actions] = start({ clientId: 'client-1', position: 7 });
  assert.is(snapshot.value, 'anonymous');
  assert.equal(frames(actions), [{ type: 'PB_CONNECT', id: 7, data: { client_id: 'client-1', login_status: false } }]);
});

test('with a live session it starts signed in and PB_CONNECT carries the user', () => {
  const [snapshot, actions] = start({ clientId: 'client-1', position: 7, session: { user: user(), sessionId: 's1' } });
  assert.is(snapshot.value, 'signedIn');
  assert.is(snapshot.context.sessionId, 's1');
  assert.equal(frames(actions), [{ type: 'PB_CONNECT', id: 7, data: { client_id: 'client-1', login_status: true, user: user() } }]);
});

test('anonymous —SIGNED_IN→ signedIn emits login with the user, its id the sign-in position', () => {
  const { next, frames } = step(anonymous(), { type: 'SIGNED_IN', user: user(), sessionId: 's2', position: 12 });
  assert.is(next.value, 'signedIn');
  assert.is(next.context.sessionId, 's2');
  assert.is(next.context.lastId, 12);
  assert.equal(frames, [{ type: 'login', id: 12, data: { action: 'login', user: user() } }]);
});

test('a login frame never moves the id backwards', () => {
  const { frames } = step(anonymous(), { type: 'SIGNED_IN', user: user(), sessionId: 's2', position: 3 });
  assert.equal(frames, [{ type: 'login', id: 7, data: { action: 'login', user: user() } }]);
});

test('signing in again while signed in rebinds and emits login again', () => {
  const other = user('1630399136786');
  const { next, frames } = step(signedIn(), { type: 'SIGNED_IN', user: other, sessionId: 's3', position: 20 });
  assert.is(next.value, 'signedIn');
  assert.equal(next.context.user, other);
  assert.equal(frames, [{ type: 'login', id: 20, data: { action: 'login', user: other } }]);
});

test('signedIn: a MESSAGE becomes a message frame {app_id, name, data} with the event position as id', () => {
  const { next, frames } = step(signedIn(), message(9));
  assert.is(next.value, 'signedIn');
  assert.is(next.context.lastId, 9);
  assert.equal(frames, [{ type: 'message', id: 9, data: { app_id: 'game-one', name: 'reward', data: { points: 5 } } }]);
});

test('signedIn: a MESSAGE at or below the last id sent is dropped (no duplicate after a replay)', () => {
  const after9 = step(signedIn(), message(9)).next;
  assert.equal(step(after9, message(9)).frames, []);
  assert.equal(step(after9, message(8)).frames, []);
  assert.equal(step(signedIn(), message(7)).frames, []); // the PB_CONNECT id itself
  assert.equal(step(after9, message(10)).frames.length, 1);
});

test('anonymous: a MESSAGE is ignored', () => {
  const { next, frames } = step(anonymous(), message(9));
  assert.is(next.value, 'anonymous');
  assert.equal(frames, []);
});

test('HEARTBEAT emits a heartbeat frame in both states and changes nothing else', () => {
  for (const start of [anonymous(), signedIn()]) {
    const { next, frames } = step(start, { type: 'HEARTBEAT' });
    assert.is(next.value, start.value);
    assert.equal(next.context, start.context);
    assert.equal(frames, [{ type: 'heartbeat' }]);
  }
});

test('CLOSE from either state reaches the final state closed and emits nothing', () => {
  for (const start of [anonymous(), signedIn()]) {
    const { next, frames } = step(start, { type: 'CLOSE' });
    assert.is(next.value, 'closed');
    assert.is(next.status, 'done');
    assert.equal(frames, []);
  }
});

test('closed is final: nothing more happens', () => {
  const closed = step(signedIn(), { type: 'CLOSE' }).next;
  for (const event of [message(50), { type: 'HEARTBEAT' } as const, { type: 'SIGNED_IN', user: user(), sessionId: 's', position: 60 } as const]) {
    const { next, frames } = step(closed, event);
    assert.is(next.value, 'closed');
    assert.equal(frames, []);
  }
});

test('an actor of the machine sends the frames its transitions emit, in order, and completes when closed', () => {
  const actor = createActor(clientActorLogic, { input: { clientId: 'client-1', position: 7 } });
  const sent: Frame[] = [];
  let completed = false;
  actor.on('*', (frame) => sent.push(frame));
  actor.subscribe({ complete: () => (completed = true) });
  actor.start();
  actor.send({ type: 'HEARTBEAT' });
  actor.send({ type: 'SIGNED_IN', user: user(), sessionId: 's2', position: 12 });
  actor.send(message(12));
  actor.send(message(13));
  actor.send({ type: 'CLOSE' });
  actor.send({ type: 'HEARTBEAT' });
  assert.equal(
    sent.map((frame) => [frame.type, 'id' in frame ? frame.id : undefined]),
    [
      ['PB_CONNECT', 7],
      ['heartbeat', undefined],
      ['login', 12],
      ['message', 13],
    ],
  );
  assert.is(actor.getSnapshot().status, 'done');
  assert.ok(completed);
});

test.run();
