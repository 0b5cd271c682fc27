// The log's clock as each node reads it, over a store that keeps one heartbeat row per process
// (as the adapters do): clocks that cannot be told apart are not corrected, a node joining with a
// wrong clock aligns with the one running longest, a store clock wins over both, and a second
// live process with one NODE_ID is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DuplicateNodeError, LogClock } from '../../src/services/logClock.js';
import type { BeatReading, NodeBeat } from '../../src/store/port.js';
import { eventually } from '../support/eventually.js';
import { rejects } from '../support/rejects.js';

const HOUR_MS = 3_600_000;
const HEARTBEAT_MS = 20;

/** One store's heartbeat table; `storeClock` makes it a store with a clock of its own. */
function beatTable(storeClock?: () => number) {
  const rows = new Map<string, NodeBeat>();
  return {
    async beat(mine: NodeBeat, forget: readonly string[] = []): Promise<BeatReading> {
      rows.set(mine.instance, mine);
      for (const instance of forget) rows.delete(instance);
      return { beats: [...rows.values()], ...(storeClock && { storeClockMs: storeClock() }) };
    },
    rows: () => [...rows.values()],
  };
}

const node = (store: ReturnType<typeof beatTable>, nodeId: string, skewMs = 0) =>
  new LogClock({ store, nodeId, heartbeatMs: HEARTBEAT_MS, maxOffsetMs: 2000, localMs: () => Date.now() + skewMs });

/**
 * Waits until each of these nodes has beaten `times` times: by then each has read the others' beats
 * about as often, more than the readings an offset is judged on.
 */
const beaten = (store: ReturnType<typeof beatTable>, nodes: string[], times = 12) =>
  eventually(() => nodes.every((nodeId) => store.rows().some((beat) => beat.node === nodeId && beat.count >= times)), {
    what: () =>
      `${nodes.join(', ')} to beat ${times} times (${store
        .rows()
        .map((beat) => `${beat.node}: ${beat.count}`)
        .join(', ')})`,
  });

test('nodes whose clocks agree are not corrected, and read the same time', async () => {
  const store = beatTable();
  const [a, b] = [node(store, 'a'), node(store, 'b')];
  await a.start();
  await b.start();
  await beaten(store, ['a', 'b']);
  for (const clock of [a, b]) {
    assert.is(clock.reading().offsetMs, 0);
    assert.ok(clock.reading().trusted);
  }
  assert.equal([...a.reading().liveNodes].sort(), ['a', 'b']);
  a.stop();
  b.stop();
});

test('a node joining with a clock a day ahead aligns with the node running longest, which does not move', async () => {
  const store = beatTable();
  const steady = node(store, 'steady');
  const ahead = node(store, 'ahead', 25 * HOUR_MS);
  await steady.start();
  await ahead.start();
  await beaten(store, ['steady', 'ahead']);
  assert.is(steady.reading().offsetMs, 0);
  assert.ok(Math.abs(ahead.reading().offsetMs - 25 * HOUR_MS) < 100, `offset ${ahead.reading().offsetMs}`);
  assert.not.ok(ahead.reading().trusted, 'past CLOCK_MAX_OFFSET_MS');
  assert.ok(Math.abs(Date.parse(ahead.now()) - Date.parse(steady.now())) < 100, `${ahead.now()} against ${steady.now()}`);
  steady.stop();
  ahead.stop();
});

test("a store with a clock of its own is every node's reference", async () => {
  const store = beatTable(() => Date.now() - 10_000);
  const clock = node(store, 'only');
  await clock.start();
  assert.ok(Math.abs(clock.reading().offsetMs - 10_000) < 50, `offset ${clock.reading().offsetMs}`);
  clock.stop();
});

test('a second live process with the same NODE_ID is refused; after the first leaves, it may start', async () => {
  const store = beatTable();
  const first = node(store, 'shared');
  await first.start();
  await beaten(store, ['shared']);
  const refused = await rejects(node(store, 'shared').start(), DuplicateNodeError, 'a second start with NODE_ID=shared');
  assert.match(refused.message, /NODE_ID=shared/);
  await first.leave();
  const second = node(store, 'shared');
  await second.start();
  second.stop();
});

test.run();
