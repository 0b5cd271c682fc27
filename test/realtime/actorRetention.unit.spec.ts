// Clients that closed leave nothing behind on the node: user actors in their parent
// (clientActor.ts, realtimeActorsLogic), client machines in the hub's `ClientMachines`. The heap is
// measured after forced full collections, with the same churn of user actors made under the hub's
// parent and under a state machine as the parent, which keeps the name of each closed child's
// done event: that shows the measurement can see what it looks for.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, createMachine, type AnyActorLogic } from 'xstate';
import { ClientMachines, realtimeActorsLogic } from '../../src/realtime/clientActor.js';
import { userActorLogic } from '../../src/realtime/userActor.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CLIENTS = 20_000;
const out = { send: () => undefined, end: () => undefined };

/** Heap bytes retained per run of `churn` (CLIENTS clients that came and went) by what lives on. */
function retainedPerClient(churn: () => void): number {
  churn(); // warm: code and first-use allocations
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  churn();
  gc();
  gc();
  return (process.memoryUsage().heapUsed - before) / CLIENTS;
}

/** Heap bytes retained per user actor that started, took a message and closed, under one parent that lives on. */
function retainedPerUserActor(parentLogic: AnyActorLogic): number {
  const parent = createActor(parentLogic).start();
  const perClient = retainedPerClient(() => {
    for (let i = 0; i < CLIENTS; i++) {
      const actor = createActor(userActorLogic, { parent });
      actor.start();
      actor.send({ type: 'MESSAGE', position: i + 1, appId: 'game-one', name: 'reward', data: {} });
      actor.send({ type: 'CLOSE' });
    }
  });
  parent.stop();
  return perClient;
}

test("a closed user actor leaves nothing in the hub's parent; a machine as the parent would keep each one's done-event name", () => {
  const hubs = retainedPerUserActor(realtimeActorsLogic());
  const machine = retainedPerUserActor(createMachine({ id: 'parent' }));
  assert.ok(machine > 50, `the measurement sees a machine parent's growth (${machine.toFixed(1)} B per client)`);
  assert.ok(hubs < 10, `${hubs.toFixed(1)} B retained per closed user actor under the hub's parent`);
});

test("a closed client's machine leaves nothing in the hub's machines", () => {
  const machines = new ClientMachines();
  const retained = retainedPerClient(() => {
    for (let i = 0; i < CLIENTS; i++) {
      let client = machines.start({ clientId: `c${i}`, position: 1, out });
      client = machines.step(client, { type: 'HEARTBEAT' });
      machines.step(client, { type: 'CLOSE' });
    }
  });
  assert.ok(retained < 10, `${retained.toFixed(1)} B retained per closed client by the hub's machines`);
});

test.run();
