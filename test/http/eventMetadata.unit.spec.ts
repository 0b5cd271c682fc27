// The one write path stamps what it appends with the context of the work it is done for: nothing
// for unattributed work, the node alone for the node's own work, and for a request its id, who
// made it and the cause (its previous event on the same stream). Read back leniently and bounded.
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
import { WorkContext } from '../../src/system/workContext.js';

type Noted = { type: 'Noted'; data: { n: number } };
const notes: Decider<number, 'note', Noted> = {
  initialState: () => 0,
  decide: (_, n) => [{ type: 'Noted', data: { n: n + 1 } }],
  evolve: (_, event) => event.data.n,
};
const note = (work: WorkContext, store: EventStore, stream: string, options: Parameters<typeof handleCommand>[5] = {}) =>
  handleCommand(work, store, stream, notes, 'note', options);
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

stamping('unattributed work appends events without metadata', async ({ store }) => {
  await note(WorkContext.unattributed, store, 'note-a');
  assert.equal(await metadataOf(store, 'note-a'), [undefined]);
});

stamping("the node's own work carries the node only: no request, no cause", async ({ store }) => {
  const work = WorkContext.ofNode('node-1');
  await note(work, store, 'note-a');
  await note(work, store, 'note-a');
  assert.equal(await metadataOf(store, 'note-a'), [{ nodeId: 'node-1' }, { nodeId: 'node-1' }]);
});

stamping("a request's next event on a stream names its previous one there as the cause; other streams and other requests do not", async ({ store }) => {
  const work = WorkContext.ofRequest('req-1', 'node-1').asApp('game-one', 'k1');
  const intent = await note(work, store, 'op-1');
  await note(work, store, 'user-1');
  await note(work, store, 'op-1');
  await note(WorkContext.ofRequest('req-2', 'node-1'), store, 'op-1');
  const base = { requestId: 'req-1', nodeId: 'node-1', appId: 'game-one', keyId: 'k1' };
  assert.equal(await metadataOf(store, 'op-1'), [base, { ...base, causationId: intent.position! }, { requestId: 'req-2', nodeId: 'node-1' }]);
  assert.equal(await metadataOf(store, 'user-1'), [base]);
});

stamping('a request learns who made it in place; what it appended before keeps its stamp', async ({ store }) => {
  const work = WorkContext.ofRequest('req-1', undefined);
  await note(work, store, 'note-a');
  assert.is(work.asOperator('alice'), work, 'the same context');
  await note(work, store, 'note-b');
  assert.equal(await metadataOf(store, 'note-a'), [{ requestId: 'req-1' }]);
  assert.equal(await metadataOf(store, 'note-b'), [{ requestId: 'req-1', operator: 'alice' }]);
});

stamping('work that is no request gets a context of its own: the node and the unattributed stay as they were', async ({ store }) => {
  const node = WorkContext.ofNode('node-1');
  await note(node.asOperator('alice'), store, 'note-a');
  await note(WorkContext.unattributed.asOperator('bob'), store, 'note-b');
  await note(node, store, 'note-c');
  await note(WorkContext.unattributed, store, 'note-d');
  assert.equal(await metadataOf(store, 'note-a'), [{ nodeId: 'node-1', operator: 'alice' }]);
  assert.equal(await metadataOf(store, 'note-b'), [{ operator: 'bob' }]);
  assert.equal(await metadataOf(store, 'note-c'), [{ nodeId: 'node-1' }]);
  assert.equal(await metadataOf(store, 'note-d'), [undefined]);
});

stamping('two requests at once keep their own contexts', async ({ store }) => {
  await Promise.all(['a', 'b', 'c'].map((id) => note(WorkContext.ofRequest(`req-${id}`, undefined).asOperator(`op-${id}`), store, `stream-${id}`)));
  for (const id of ['a', 'b', 'c']) assert.equal(await metadataOf(store, `stream-${id}`), [{ requestId: `req-${id}`, operator: `op-${id}` }]);
});

stamping("a fenced append stamps the claim's events too; where it left either stream is no cause", async ({ store }) => {
  const fence = (revision: number | 'no_stream') => () => ({ streamName: 'claim-1', expectedRevision: revision, events: [{ type: 'Bound', data: {} }] });
  const work = WorkContext.ofRequest('req-1', undefined);
  await note(work, store, 'op-1', { fence: fence('no_stream') });
  await note(work, store, 'op-1');
  assert.equal(await metadataOf(store, 'claim-1'), [{ requestId: 'req-1' }]);
  assert.equal(await metadataOf(store, 'op-1'), [{ requestId: 'req-1' }, { requestId: 'req-1' }]);
});

stamping('texts are cut to their bound', async ({ store }) => {
  await note(WorkContext.ofRequest('r', undefined).asOperator('o'.repeat(METADATA_TEXT_MAX + 50)), store, 'note-a');
  const [metadata] = await metadataOf(store, 'note-a');
  assert.is((metadata!.operator as string).length, METADATA_TEXT_MAX);
});

stamping('a request remembers a bounded number of streams for causation', async ({ store }) => {
  const work = WorkContext.ofRequest('req-1', undefined);
  for (let i = 0; i < 40; i++) await note(work, store, `s-${i}`);
  for (const i of [0, 39]) await note(work, store, `s-${i}`);
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
