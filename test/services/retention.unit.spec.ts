// Retention runs on one node at a time: the node that leads deletes what is due; the others only
// forget it in their read models, and delete nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log.js';
import { StreamRetention } from '../../src/services/retention.js';
import type { StreamsDeleted } from '../../src/domain/events.js';
import type { EventStore } from '../../src/store/port.js';

function world(leads: boolean, recordFails = false, keptOnce: string[] = [], deleteFailsOnce = false) {
  const deleted: string[][] = [];
  const recorded: string[][] = [];
  const forgotten: string[][] = [];
  let due = ['client-a', 'client-b'];
  const retention = new StreamRetention({
    store: {
      append: async (stream, events) => {
        assert.is(stream, 'retention');
        if (recordFails) throw new Error('the store refuses writes');
        for (const event of events) {
          const { streams } = event.data as StreamsDeleted['data'];
          recorded.push([...streams]);
          // As the read models fold the record: what it names is no longer due.
          due = due.filter((name) => !streams.includes(name));
        }
        return { position: recorded.length, nextExpectedRevision: recorded.length - 1 };
      },
      deleteStreams: async (names: readonly string[]) => {
        if (deleteFailsOnce) {
          deleteFailsOnce = false;
          throw new Error('the store went away');
        }
        deleted.push([...names]);
        const kept = keptOnce.filter((name) => names.includes(name));
        keptOnce = [];
        return { kept };
      },
    } as Pick<EventStore, 'append' | 'deleteStreams'>,
    nodeId: 'node-a',
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
  return { retention, deleted, recorded, forgotten };
}

test('the leading node records what it deletes, deletes what is due, then forgets it', async () => {
  const { retention, deleted, recorded, forgotten } = world(true);
  assert.is(await retention.runOnce(), 2);
  assert.equal(recorded, [['client-a', 'client-b']]);
  assert.equal(deleted, [['client-a', 'client-b']]);
  assert.equal(forgotten, [['client-a', 'client-b']]);
});

test('a node that does not lead records and deletes nothing, and forgets what is due', async () => {
  const { retention, deleted, recorded, forgotten } = world(false);
  assert.is(await retention.runOnce(), 2);
  assert.equal(recorded, []);
  assert.equal(deleted, []);
  assert.equal(forgotten, [['client-a', 'client-b']]);
});

test('a stream the deletion kept is deleted again at the next run, though the read models forgot it', async () => {
  const { retention, deleted, recorded, forgotten } = world(true, false, ['client-b']);
  assert.is(await retention.runOnce(), 1);
  assert.equal(forgotten, [['client-a']]);
  assert.is(await retention.runOnce(), 1, 'client-b, no longer due in the read model');
  assert.equal(deleted, [['client-a', 'client-b'], ['client-b']]);
  assert.equal(recorded, [['client-a', 'client-b'], ['client-b']]);
});

test('streams recorded as deleted whose deletion then failed are deleted at the next run, though the read models forgot them', async () => {
  const { retention, deleted, recorded } = world(true, false, [], true);
  assert.is(await retention.runOnce(), 0);
  assert.equal(recorded, [['client-a', 'client-b']]);
  assert.is(await retention.runOnce(), 2, 'no longer due in the read model');
  assert.equal(deleted, [['client-a', 'client-b']]);
});

test('nothing is deleted or forgotten when what would be deleted cannot be recorded first', async () => {
  const { retention, deleted, forgotten } = world(true, true);
  assert.is(await retention.runOnce(), 0);
  assert.equal(deleted, []);
  assert.equal(forgotten, []);
});

test.run();
