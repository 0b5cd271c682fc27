// Client actors that closed leave nothing behind in their parent (clientActor.ts,
// realtimeActorsLogic). The heap is measured after forced full collections, with the same churn
// made under the hub's parent and under a state machine as the parent, which keeps the name of
// each closed child's done event: that shows the measurement can see what it looks for.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, createMachine, type AnyActorLogic } from 'xstate';
import { clientActorLogic, realtimeActorsLogic } from '../../src/realtime/clientActor.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CLIENTS = 20_000;
const out = { send: () => undefined, end: () => undefined };

/** Heap bytes retained per client that connected and left, under one parent that lives on. */
function retainedPerClient(parentLogic: AnyActorLogic): number {
  const parent = createActor(parentLogic).start();
  const churn = () => {
    for (let i = 0; i < CLIENTS; i++) {
      const actor = createActor(clientActorLogic, { parent, input: { clientId: `c${i}`, position: 1, out } });
      actor.start();
      actor.send({ type: 'HEARTBEAT' });
      actor.send({ type: 'CLOSE' });
    }
  };
  churn(); // warm: code and first-use allocations
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  churn();
  gc();
  gc();
  const perClient = (process.memoryUsage().heapUsed - before) / CLIENTS;
  parent.stop();
  return perClient;
}

test("a closed client leaves nothing in the hub's parent; a machine as the parent would keep each one's done-event name", () => {
  const hubs = retainedPerClient(realtimeActorsLogic());
  const machine = retainedPerClient(createMachine({ id: 'parent' }));
  assert.ok(machine > 50, `the measurement sees a machine parent's growth (${machine.toFixed(1)} B per client)`);
  assert.ok(hubs < 10, `${hubs.toFixed(1)} B retained per closed client under the hub's parent`);
});

test.run();
