// The one write path on a real SQLite file: a state the caller assumes is only a starting point.
// The append's revision check catches one that lags, and anything other than an append that was
// decided on it is confirmed against the stream itself.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Decider } from '../../src/domain/decider.js';
import { ConflictError } from '../../src/domain/errors.js';
import { WorkContext } from '../../src/system/workContext.js';
import { handleCommand } from '../../src/services/commandHandler.js';
import type { EventStore } from '../../src/store/port.js';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { rejects } from '../support/rejects.js';

/** A counter that refuses to go past a limit: enough rules to tell which state a decision saw. */
type Counted = { type: 'Counted'; data: { to: number } };
type Count = { type: 'Count'; limit: number };
const counter: Decider<number, Count, Counted> = {
  initialState: () => 0,
  decide: (command, count) => {
    if (count >= command.limit) throw new ConflictError(`at the limit ${command.limit}`);
    return [{ type: 'Counted', data: { to: count + 1 } }];
  },
  evolve: (_, event) => event.data.to,
};
const count = (limit = 10): Count => ({ type: 'Count', limit });

const handler = suite<{ dir: string; store: EventStore }>('command handling');
handler.before.each(async (context) => {
  context.dir = await mkdtemp(join(tmpdir(), 'community-bridge-commands-'));
  context.store = new SqliteEventStore({ file: join(context.dir, 'events.sqlite') });
});
handler.after.each(async ({ dir, store }) => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

handler('without a known state it reads, decides and appends with the expected revision', async ({ store }) => {
  await handleCommand(WorkContext.unattributed, store, 'count-a', counter, count());
  const second = await handleCommand(WorkContext.unattributed, store, 'count-a', counter, count());
  assert.equal(second.events, [{ type: 'Counted', data: { to: 2 } }]);
  assert.is(second.state, 2);
  assert.is(second.revision, 1);
  assert.equal(
    (await store.readStream('count-a')).map((e) => e.data),
    [{ to: 1 }, { to: 2 }],
  );
});

handler('a known state that is current appends without reading the stream', async ({ store }) => {
  const first = await handleCommand(WorkContext.unattributed, store, 'count-b', counter, count());
  let reads = 0;
  const counting = new Proxy(store, {
    get: (target, property) => {
      if (property !== 'readStream') return Reflect.get(target, property, target);
      return (name: string) => {
        reads++;
        return target.readStream(name);
      };
    },
  });
  const second = await handleCommand(WorkContext.unattributed, counting, 'count-b', counter, count(), { known: { state: first.state, revision: first.revision } });
  assert.is(reads, 0);
  assert.is(second.state, 2);
});

handler('a known state that lags is caught by the append and decided again on the stream', async ({ store }) => {
  const stale = await handleCommand(WorkContext.unattributed, store, 'count-c', counter, count());
  await handleCommand(WorkContext.unattributed, store, 'count-c', counter, count());
  const third = await handleCommand(WorkContext.unattributed, store, 'count-c', counter, count(), { known: { state: stale.state, revision: stale.revision } });
  assert.equal(third.events, [{ type: 'Counted', data: { to: 3 } }]);
  assert.equal(
    (await store.readStream('count-c')).map((e) => (e.data as Counted['data']).to),
    [1, 2, 3],
  );
});

handler('a refusal decided on a known state is confirmed against the stream before it stands', async ({ store }) => {
  // The caller believes the stream is at the limit; it is not.
  const handled = await handleCommand(WorkContext.unattributed, store, 'count-d', counter, count(1), { known: { state: 1, revision: 0 } });
  assert.equal(handled.events, [{ type: 'Counted', data: { to: 1 } }]);
  await rejects(
    handleCommand(WorkContext.unattributed, store, 'count-d', counter, count(1), { known: { state: 0, revision: -1 } }),
    ConflictError,
    'the command refused against the stream',
  );
});

handler('two writers on one stream through two store handles: every command lands once, in turn', async ({ dir, store }) => {
  const other = new SqliteEventStore({ file: join(dir, 'events.sqlite') });
  try {
    await Promise.all(Array.from({ length: 20 }, (_, i) => handleCommand(WorkContext.unattributed, i % 2 ? store : other, 'count-e', counter, count(100))));
    assert.equal(
      (await store.readStream('count-e')).map((e) => (e.data as Counted['data']).to),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  } finally {
    await other.close();
  }
});

handler('commands on one stream in one process run one after another, a refused one included', async ({ store }) => {
  let appending = 0;
  let mostAtOnce = 0;
  let appends = 0;
  // The store itself, but for its appends, which are counted as they run.
  const watched = Object.create(store) as EventStore;
  watched.append = async (...args) => {
    appends += 1;
    appending += 1;
    mostAtOnce = Math.max(mostAtOnce, appending);
    try {
      return await store.append(...args);
    } finally {
      appending -= 1;
    }
  };
  // Every command decided on the same known state: run side by side, all but one would conflict.
  const known = { state: 0, revision: -1 };
  const outcomes = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) => handleCommand(WorkContext.unattributed, watched, 'count-f', counter, count(i === 3 ? 0 : 100), { known })),
  );
  assert.is(mostAtOnce, 1, 'never two appends to the stream at once');
  assert.is(outcomes.filter((o) => o.status === 'rejected').length, 1, 'only the command over its limit is refused');
  // The first appends on the known state; each of the ten others after it, once on that (stale)
  // state and once more on the stream.
  assert.is(appends, 1 + 10 * 2, 'no append ran into another of this process');
  assert.equal(
    (await store.readStream('count-f')).map((e) => (e.data as Counted['data']).to),
    Array.from({ length: 11 }, (_, i) => i + 1),
  );
});

handler.run();
