// The one write path stamps what it appends with the context of the work in progress: nothing
// outside any context, the node alone for the node's own work, and for a request its id, who made
// it and the cause (its previous event on the same stream). Read back leniently and bounded.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Decider } from '../../src/domain/decider.js';
import { handleCommand } from '../../src/services/commandHandler.js';
import type { EventStore } from '../../src/store/port.js';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { METADATA_TEXT_MAX, metadataPairs, readEventMetadata } from '../../src/system/eventMetadata.js';
import { runAsApp, runAsNode, runAsOperator, runAsRequest } from '../../src/system/requestContext.js';

type Noted = { type: 'Noted'; data: { n: number } };
const notes: Decider<number, 'note', Noted> = {
  initialState: () => 0,
  decide: (_, n) => [{ type: 'Noted', data: { n: n + 1 } }],
  evolve: (_, event) => event.data.n,
};
const note = (store: EventStore, stream: string, options: Parameters<typeof handleCommand>[4] = {}) => handleCommand(store, stream, notes, 'note', options);
const metadataOf = async (store: EventStore, stream: string) => (await store.readStream(stream)).map((e) => e.metadata);

const stamping = suite<{ dir: string; store: EventStore }>('stamping appends');
stamping.before.each(async (context) => {
  context.dir = await mkdtemp(join(tmpdir(), 'community-bridge-metadata-'));
  context.store = new SqliteEventStore({ file: join(context.dir, 'events.sqlite') });
});
stamping.after.each(async ({ dir, store }) => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

stamping('outside any context an event carries no metadata', async ({ store }) => {
  await note(store, 'note-a');
  assert.equal(await metadataOf(store, 'note-a'), [undefined]);
});

stamping("the node's own work carries the node only: no request, no cause", async ({ store }) => {
  await runAsNode('node-1', async () => {
    await note(store, 'note-a');
    await note(store, 'note-a');
  });
  assert.equal(await metadataOf(store, 'note-a'), [{ nodeId: 'node-1' }, { nodeId: 'node-1' }]);
});

stamping("a request's next event on a stream names its previous one there as the cause; other streams and other requests do not", async ({ store }) => {
  const first = await runAsNode('node-1', () =>
    runAsRequest('req-1', () =>
      runAsApp('game-one', 'k1', async () => {
        const intent = await note(store, 'op-1');
        await note(store, 'user-1');
        await note(store, 'op-1');
        return intent.position!;
      }),
    ),
  );
  await runAsNode('node-1', () => runAsRequest('req-2', () => note(store, 'op-1')));
  const base = { requestId: 'req-1', nodeId: 'node-1', appId: 'game-one', keyId: 'k1' };
  assert.equal(await metadataOf(store, 'op-1'), [base, { ...base, causationId: first }, { requestId: 'req-2', nodeId: 'node-1' }]);
  assert.equal(await metadataOf(store, 'user-1'), [base]);
});

stamping('two requests at once keep their own contexts', async ({ store }) => {
  await Promise.all(['a', 'b', 'c'].map((id) => runAsRequest(`req-${id}`, () => runAsOperator(`op-${id}`, () => note(store, `stream-${id}`)))));
  for (const id of ['a', 'b', 'c']) assert.equal(await metadataOf(store, `stream-${id}`), [{ requestId: `req-${id}`, operator: `op-${id}` }]);
});

stamping("a fenced append stamps the claim's events too; where it left either stream is no cause", async ({ store }) => {
  const fence = (revision: number | 'no_stream') => () => ({ streamName: 'claim-1', expectedRevision: revision, events: [{ type: 'Bound', data: {} }] });
  await runAsRequest('req-1', async () => {
    await note(store, 'op-1', { fence: fence('no_stream') });
    await note(store, 'op-1');
  });
  assert.equal(await metadataOf(store, 'claim-1'), [{ requestId: 'req-1' }]);
  assert.equal(await metadataOf(store, 'op-1'), [{ requestId: 'req-1' }, { requestId: 'req-1' }]);
});

stamping('texts are cut to their bound', async ({ store }) => {
  await runAsRequest('r', () => runAsOperator('o'.repeat(METADATA_TEXT_MAX + 50), () => note(store, 'note-a')));
  const [metadata] = await metadataOf(store, 'note-a');
  assert.is((metadata!.operator as string).length, METADATA_TEXT_MAX);
});

stamping('a request remembers a bounded number of streams for causation', async ({ store }) => {
  await runAsRequest('req-1', async () => {
    for (let i = 0; i < 40; i++) await note(store, `s-${i}`);
    for (const i of [0, 39]) await note(store, `s-${i}`);
  });
  assert.ok((await metadataOf(store, 's-0'))[1]!.causationId, 'an early stream names its cause');
  assert.is((await metadataOf(store, 's-39'))[1]!.causationId, undefined, 'one past the bound does not');
});

stamping.run();

const reading = suite('reading metadata back');

reading('what the log holds is read leniently: absent, foreign keys, wrong types, long texts', () => {
  assert.equal(readEventMetadata(undefined), {});
  assert.equal(readEventMetadata(null), {});
  assert.equal(readEventMetadata({ $correlationId: 'x', requestId: 7, appId: ['a'], causationId: 'twelve', nodeId: 'n' }), { nodeId: 'n' });
  assert.equal(readEventMetadata({ causationId: -1 }), {});
  assert.is(readEventMetadata({ requestId: 'r'.repeat(1000) }).requestId!.length, METADATA_TEXT_MAX);
});

reading('for a person, in a fixed order', () => {
  assert.equal(metadataPairs({ causationId: 12, nodeId: 'n', keyId: 'k', appId: 'a', requestId: 'r' }), [
    ['request', 'r'],
    ['app', 'a'],
    ['key', 'k'],
    ['node', 'n'],
    ['cause', '#12'],
  ]);
  assert.equal(metadataPairs({ operator: 'console:1' }), [['operator', 'console:1']]);
});

reading.run();
