// The realtime client's machine on its own (docs/architecture.md, "Realtime"): xstate's pure `initialTransition` and
// `transition` calls, no actor, no socket. Every transition is checked for the state it reaches
// and the frames it emits (its actions, run against a recording `out`); then the way the hub runs
// the machines (`ClientMachines`), against an actor of the same machine.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromTransition, initialTransition, StateMachine, transition, type ExecutableActionObject } from 'xstate';
import { ClientMachines, clientActorLogic, realtimeActorsLogic, type ClientActorEvent, type ClientInput, type Frame, type FrameSink } from '../../src/realtime/clientActor.js';
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

/** An `out` that records what the actions it is handed send; `ended` counts the ends. */
function recorder() {
  const sent: Frame[] = [];
  const out = { sent, ended: 0, send: (frame: Frame) => void sent.push(frame), end: () => void out.ended++ };
  return out satisfies FrameSink;
}
type Recorder = ReturnType<typeof recorder>;

/** The frames a step sends: its actions run, as an actor runs them, against the snapshot's recording `out`. */
function frames(actions: readonly ExecutableActionObject[], out: Recorder): Frame[] {
  const from = out.sent.length;
  for (const action of actions) action.exec?.(action.info, action.params);
  return out.sent.slice(from);
}

/** The first step of the actor the hub starts for this input, with a recording `out` of its own. */
const start = (input: Omit<ClientInput, 'out'>) => {
  const out = recorder();
  const [snapshot, actions] = initialTransition(clientActorLogic, { ...input, out });
  return [snapshot, actions, out] as const;
};
const outOf = (snapshot: { context: { out: FrameSink } }) => snapshot.context.out as Recorder;
const anonymous = () => start({ clientId: 'client-1', position: 7 })[0];
const signedIn = () => start({ clientId: 'client-1', position: 7, session: { user: user(), sessionId: 's1' } })[0];
const step = (snapshot: ReturnType<typeof anonymous>, event: ClientActorEvent) => {
  const [next, actions] = transition(clientActorLogic, snapshot, event);
  return { next, frames: frames(actions, outOf(snapshot)) };
};
const message = (position: number, name = 'reward'): ClientActorEvent => ({ type: 'MESSAGE', position, appId: 'game-one', name, data: { points: 5 } });

test('a state machine: anonymous, signedIn and the final state closed', () => {
  assert.ok(clientActorLogic instanceof StateMachine);
  assert.equal(Object.keys(clientActorLogic.root.states), ['anonymous', 'signedIn', 'closed']);
  assert.is(clientActorLogic.root.states.closed!.type, 'final');
});

test("the machine asks nothing of the hub's one scope: no delays, no children, only its own named actions", () => {
  // The hub runs every client through one scope whose `self` is not the client (ClientMachines):
  // a delayed transition, an invoked or spawned child, or a `sendTo` would reach that idle actor.
  const named = new Set(Object.keys(clientActorLogic.implementations.actions));
  // Each named action is our own function or an `assign`: no built-in action that sends, raises, spawns or stops.
  for (const [name, implementation] of Object.entries(clientActorLogic.implementations.actions)) {
    const builtIn = (implementation as { type?: unknown }).type;
    assert.ok(builtIn === undefined || builtIn === 'xstate.assign', `${name} is a function of ours or an assign, not ${String(builtIn)}`);
  }
  const nodes = [clientActorLogic.root, ...Object.values(clientActorLogic.root.states)];
  for (const node of nodes) {
    assert.equal(node.after, [], `${node.id} has no delayed transitions`);
    assert.equal(node.invoke, [], `${node.id} invokes nothing`);
    const transitions = [...node.transitions.values()].flat().concat(node.always ?? []);
    for (const action of [...node.entry, ...node.exit, ...transitions.flatMap((t) => t.actions)]) {
      assert.ok(typeof action === 'string' && named.has(action), `${node.id}: ${String(action)} is one of the machine's named actions`);
    }
  }
});

test('without a session it starts anonymous and emits PB_CONNECT with login_status false', () => {
  const [snapshot, actions, out] = start({ clientId: 'client-1', position: 7 });
  assert.is(snapshot.value, 'anonymous');
  assert.equal(frames(actions, out), [{ type: 'PB_CONNECT', id: 7, data: { client_id: 'client-1', login_status: false } }]);
});

test('with a live session it starts signed in and PB_CONNECT carries the user', () => {
  const [snapshot, actions, out] = start({ clientId: 'client-1', position: 7, session: { user: user(), sessionId: 's1' } });
  assert.is(snapshot.value, 'signedIn');
  assert.is(snapshot.context.sessionId, 's1');
  assert.equal(frames(actions, out), [{ type: 'PB_CONNECT', id: 7, data: { client_id: 'client-1', login_status: true, user: user() } }]);
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

test('CLOSE from either state reaches the final state closed, emits nothing and ends the frames', () => {
  for (const start of [anonymous, signedIn]) {
    const { next, frames } = step(start(), { type: 'CLOSE' });
    assert.is(next.value, 'closed');
    assert.is(next.status, 'done');
    assert.equal(frames, []);
    assert.is(outOf(next).ended, 1);
  }
});

test('closed is final: nothing more happens', () => {
  const closed = step(signedIn(), { type: 'CLOSE' }).next;
  for (const event of [message(50), { type: 'HEARTBEAT' } as const, { type: 'SIGNED_IN', user: user(), sessionId: 's', position: 60 } as const]) {
    const { next, frames } = step(closed, event);
    assert.is(next.value, 'closed');
    assert.equal(frames, []);
  }
  assert.is(outOf(closed).ended, 1);
});

test("the hub's machines send the frames their transitions emit, in order, and end them when closed", () => {
  const machines = new ClientMachines();
  const out = recorder();
  const { sent } = out;
  let client = machines.start({ clientId: 'client-1', position: 7, out });
  for (const event of [
    { type: 'HEARTBEAT' },
    { type: 'SIGNED_IN', user: user(), sessionId: 's2', position: 12 },
    message(12),
    message(13),
    { type: 'CLOSE' },
    { type: 'HEARTBEAT' },
  ] as const) {
    client = machines.step(client, event);
  }
  assert.equal(
    sent.map((frame) => [frame.type, 'id' in frame ? frame.id : undefined]),
    [
      ['PB_CONNECT', 7],
      ['heartbeat', undefined],
      ['login', 12],
      ['message', 13],
    ],
  );
  assert.is(client.value, 'closed');
  assert.is(client.status, 'done');
  assert.is(out.ended, 1);
});

test("the hub's machines take the same steps as an actor of the machine", () => {
  const events: ClientActorEvent[] = [{ type: 'SIGNED_IN', user: user(), sessionId: 's2', position: 12 }, message(11), message(14), { type: 'HEARTBEAT' }, { type: 'CLOSE' }];
  const viaActor = recorder();
  const actor = createActor(clientActorLogic, { input: { clientId: 'client-1', position: 7, out: viaActor } });
  actor.start();
  for (const event of events) actor.send(event);
  const inPlace = recorder();
  const machines = new ClientMachines();
  let client = machines.start({ clientId: 'client-1', position: 7, out: inPlace });
  for (const event of events) client = machines.step(client, event);
  assert.equal(inPlace.sent, viaActor.sent);
  assert.is(client.value, actor.getSnapshot().value);
  assert.equal(client.context.lastId, actor.getSnapshot().context.lastId);
});

test('a step whose action throws throws out of step, and the client keeps the snapshot it had', () => {
  const machines = new ClientMachines();
  const broken = new Error('the writer broke');
  let failing = false;
  const out: FrameSink = {
    send: () => {
      if (failing) throw broken;
    },
    end: () => undefined,
  };
  const before = machines.start({ clientId: 'client-9', position: 7, out });
  failing = true;
  assert.throws(
    () => machines.step(before, { type: 'SIGNED_IN', user: user(), sessionId: 's2', position: 12 }),
    (error: unknown) => error === broken,
  );
  assert.is(before.value, 'anonymous');
  assert.is(before.context.lastId, 7);
});

test("a child whose transition throws fails without throwing, and the hub's parent hears of it under the child's id", () => {
  const failures: Array<[string, unknown]> = [];
  const parent = createActor(realtimeActorsLogic((actorId, error) => failures.push([actorId, error]))).start();
  const broken = new Error('the transition broke');
  const child = createActor(
    fromTransition(() => {
      throw broken;
    }, undefined),
    { parent, id: 'user-9' },
  );
  child.start();
  child.send({ type: 'MESSAGE' });
  assert.is(child.getSnapshot().status, 'error');
  assert.equal(failures, [['user-9', broken]]);
  parent.stop();
});

test.run();
