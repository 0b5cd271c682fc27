// Retention runs on one node at a time: the node that leads deletes what is due; the others only
// forget it in their read models, and delete nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log.js';
import { StreamRetention } from '../../src/services/retention.js';
import type { EventStore } from '../../src/store/port.js';

function world(leads: boolean) {
  const deleted: string[][] = [];
  const forgotten: string[][] = [];
  let due = ['client-a', 'client-b'];
  const retention = new StreamRetention({
    store: {
      deleteStreams: async (names: readonly string[]) => {
        deleted.push([...names]);
        return { kept: [] };
      },
    } as Pick<EventStore, 'deleteStreams'> as EventStore,
    disposable: {
      dueBy: () => due,
      forget: (names) => {
        forgotten.push([...names]);
        due = due.filter((name) => !names.includes(name));
      },
    },
    clock: { now: () => '2026-11-28T00:00:00.000Z' },
    leads: () => leads,
    log: createLogger('silent'),
    retentionMs: 1000,
  });
  return { retention, deleted, forgotten };
}

test('the leading node deletes what is due, then forgets it', async () => {
  const { retention, deleted, forgotten } = world(true);
  assert.is(await retention.runOnce(), 2);
  assert.equal(deleted, [['client-a', 'client-b']]);
  assert.equal(forgotten, [['client-a', 'client-b']]);
});

test('a node that does not lead deletes nothing, and forgets what is due', async () => {
  const { retention, deleted, forgotten } = world(false);
  assert.is(await retention.runOnce(), 2);
  assert.equal(deleted, []);
  assert.equal(forgotten, [['client-a', 'client-b']]);
});

test.run();
