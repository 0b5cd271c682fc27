// Presence across nodes on one SQLite store, with real service processes and real SSE clients:
// both nodes list the same users with the same `since` (the time the log recorded the sign-in,
// not either node's clock), /metrics counts each node's clients, and when one node is SIGKILLed
// its users leave presence on the other once its lease lapses, while a user who also has a client
// on the live node stays, their `since` now that client's sign-in.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { PresenceAnswer, PresencePage } from '../../src/contract/answers.js';
import { toSpecTimestamp } from '../../src/domain/time.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import type { ServiceProcess } from '../support/serviceProcess.js';
import { openWorld, signInThrough, type World } from './world.js';

// A node's lease lapses within 1.5 s of its last heartbeat.
const SUITE_ENV = { NODE_HEARTBEAT_MS: '200' };

type Page = v.InferOutput<typeof PresencePage>;
type One = v.InferOutput<typeof PresenceAnswer>['data'];

type Ctx = { world: World; streams: Array<{ close(): void }> };
const test = suite<Ctx>('presence across nodes: a killed node leaves it once its lease lapses');

test.before(async (ctx) => {
  ctx.world = await openWorld(SUITE_ENV);
  ctx.streams = [];
});
test.after(async ({ world, streams }) => {
  for (const stream of streams) stream.close();
  await world.close();
});

/** When the log recorded the sign-in of this client, as the API writes times. */
function signInRecorded(ctx: Ctx, clientId: string): string {
  const event = ctx.world.log.stream(`client-${clientId}`).find((e) => e.type === 'ClientSignedIn');
  assert.ok(event, `the sign-in of ${clientId} in the log`);
  return toSpecTimestamp(event!.created);
}

async function presence(ctx: Ctx, node: ServiceProcess): Promise<Page['data']> {
  const res = await node.request('GET', '/adm/presence', { apiKey: ctx.world.key });
  assert.is(res.status, 200, res.text);
  return (res.body as Page).data;
}

async function presenceOf(ctx: Ctx, node: ServiceProcess, oId: string): Promise<One> {
  const res = await node.request('GET', `/adm/presence/${oId}`, { apiKey: ctx.world.key });
  assert.is(res.status, 200, res.text);
  return (res.body as { data: One }).data;
}

const brief = (page: Page['data']) => page.items.map(({ oId, clients, since }) => ({ oId, clients, since }));

/** A sample of /metrics, or undefined when the series is absent. */
async function sample(node: ServiceProcess, series: string): Promise<number | undefined> {
  const text = (await node.request('GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('both nodes list the same users and times; the killed node takes its clients out of presence on the other', async (ctx) => {
  const a = await ctx.world.start('pr-a');
  const b = await ctx.world.start('pr-b');
  const aliceOnA = await signInThrough(a, ALICE.oId, ctx.streams);
  const bobOnA = await signInThrough(a, BOB.oId, ctx.streams);
  const bobOnB = await signInThrough(b, BOB.oId, ctx.streams);

  const expected = [
    { oId: ALICE.oId, clients: 1, since: signInRecorded(ctx, aliceOnA) },
    { oId: BOB.oId, clients: 2, since: signInRecorded(ctx, bobOnA) },
  ];
  for (const node of [a, b]) {
    const seen = await eventually(async () => {
      const page = await presence(ctx, node);
      return JSON.stringify(brief(page)) === JSON.stringify(expected) && page;
    }, `${node.nodeId} to list alice and bob with their clients on both nodes`);
    assert.equal(brief(seen), expected);
  }
  assert.equal(await presence(ctx, a), await presence(ctx, b), 'the same answer from either node, cursors included');

  for (const node of [a, b]) {
    assert.is(await sample(node, 'presence_clients{node="pr-a"}'), 2, node.nodeId);
    assert.is(await sample(node, 'presence_clients{node="pr-b"}'), 1, node.nodeId);
    assert.is(await sample(node, 'presence_users{node="pr-a"}'), 2, node.nodeId);
    assert.is(await sample(node, 'presence_users{node="pr-b"}'), 1, node.nodeId);
    assert.is(await sample(node, 'presence_users_online'), 2, node.nodeId);
  }

  await a.kill();
  const after = await eventually(async () => {
    const page = await presence(ctx, b);
    return page.items.length === 1 && page;
  }, "pr-a's clients to leave presence on pr-b once its lease lapsed");
  assert.equal(brief(after), [{ oId: BOB.oId, clients: 1, since: signInRecorded(ctx, bobOnB) }], "bob's client on pr-b stays, since its own sign-in");
  const alice = await presenceOf(ctx, b, ALICE.oId);
  assert.equal([alice.online, alice.clients, alice.since], [false, 0, undefined], 'alice, only on pr-a, is offline');
  assert.ok(!ctx.world.log.stream(`client-${aliceOnA}`).some((e) => e.type === 'ClientDisconnected'), 'nothing recorded her disconnect: the lease alone took her out');
  assert.is(await sample(b, 'presence_clients{node="pr-a"}'), undefined, 'the gone node has no series');
  assert.is(await sample(b, 'presence_clients{node="pr-b"}'), 1);
  assert.is(await sample(b, 'presence_users_online'), 1);
  await b.kill();
});

test.run();
