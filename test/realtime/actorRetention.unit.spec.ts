// Client actors that closed leave nothing behind in their parent (clientMachine.ts, CHILD_IDS).
// The heap is measured after forced full collections, with the same churn made twice: once with
// the ids the hub gives its children and once with xstate's default id per actor, which shows the
// measurement can see what it looks for.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor } from 'xstate';
import { CHILD_IDS, clientMachine, clientsMachine } from '../../src/realtime/clientMachine.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CLIENTS = 20_000;

/** Heap bytes retained per client that connected and left, under one parent that lives on. */
function retainedPerClient(id: string | undefined): number {
  const parent = createActor(clientsMachine).start();
  const churn = () => {
    for (let i = 0; i < CLIENTS; i++) {
      const actor = createActor(clientMachine, { ...(id !== undefined && { id }), parent, input: { clientId: `c${i}`, position: 1 } });
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

test('a closed client leaves nothing in the parent; with an id per actor each would leave its done-event name', () => {
  const shared = retainedPerClient(CHILD_IDS.client);
  const perActor = retainedPerClient(undefined);
  assert.ok(perActor > 50, `the measurement sees the default ids' growth (${perActor.toFixed(1)} B per client)`);
  assert.ok(shared < 10, `${shared.toFixed(1)} B retained per closed client with the hub's ids`);
});

test.run();
