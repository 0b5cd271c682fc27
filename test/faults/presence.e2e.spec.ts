// Presence across nodes on one SQLite store (test/faults/presenceKill.ts says what is checked).
import { suite } from 'uvu';
import { openWorld, type World } from './world.js';
import { killedNodeLeavesPresence, PRESENCE_ENV } from './presenceKill.js';

type Ctx = { world: World; streams: Array<{ close(): void }> };
const test = suite<Ctx>('presence across nodes: a killed node leaves it once its lease lapses');

test.before(async (ctx) => {
  ctx.world = await openWorld(PRESENCE_ENV);
  ctx.streams = [];
});
test.after(async ({ world, streams }) => {
  for (const stream of streams) stream.close();
  await world.close();
});

test('both nodes list the same users and times; the killed node takes its clients out of presence on the other', async ({ world, streams }) => {
  await killedNodeLeavesPresence({
    key: world.key,
    start: (nodeId) => world.start(nodeId),
    events: async (stream) => world.log.stream(stream),
    streams,
  });
});

test.run();
