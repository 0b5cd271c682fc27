// Presence across two nodes, with real service processes and real SSE clients, on whichever
// store the suite gives (presence.e2e: SQLite, presencePostgres.e2e: PostgreSQL): both nodes list
// the same users with the same `since` (the time the log recorded the sign-in, not either node's
// clock), /metrics counts each node's clients, and when one node is SIGKILLed its users leave
// presence on the other once its lease lapses (and `/adm/user/get` and push answers agree),
// while a user who also has a client on the live node stays, their `since` now that client's
// sign-in.
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { PresenceAnswer, PresencePage } from '../../src/contract/answers.js';
import { toSpecTimestamp } from '../../src/domain/time.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import type { ServiceProcess } from '../support/serviceProcess.js';
import { signInThrough } from './world.js';

/** A node's lease lapses within 1.5 s of its last heartbeat. */
export const PRESENCE_ENV = { NODE_HEARTBEAT_MS: '200' };

type Page = v.InferOutput<typeof PresencePage>;
type One = v.InferOutput<typeof PresenceAnswer>['data'];

export interface PresenceWorld {
  /** A key with every permission. */
  key: string;
  /** A service process of the suite's store, as a node of this name. */
  start(nodeId: string): Promise<ServiceProcess>;
  /** The events of one stream, as the log recorded them. */
  events(stream: string): Promise<Array<{ type: string; created: string }>>;
  /** Closed by the suite. */
  streams: Array<{ close(): void }>;
}

/** When the log recorded the sign-in of this client, as the API writes times. */
async function signInRecorded(world: PresenceWorld, clientId: string): Promise<string> {
  const event = (await world.events(`client-${clientId}`)).find((e) => e.type === 'ClientSignedIn');
  assert.ok(event, `the sign-in of ${clientId} in the log`);
  return toSpecTimestamp(event!.created);
}

async function presence(world: PresenceWorld, node: ServiceProcess): Promise<Page['data']> {
  const res = await node.request('GET', '/adm/presence', { apiKey: world.key });
  assert.is(res.status, 200, res.text);
  return (res.body as Page).data;
}

async function presenceOf(world: PresenceWorld, node: ServiceProcess, oId: string): Promise<One> {
  const res = await node.request('GET', `/adm/presence/${oId}`, { apiKey: world.key });
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

/** Both nodes list the same users and times; the killed node takes its clients out of presence on the other. */
export async function killedNodeLeavesPresence(world: PresenceWorld): Promise<void> {
  const a = await world.start('pr-a');
  const b = await world.start('pr-b');
  const aliceOnA = await signInThrough(a, ALICE.oId, world.streams);
  const bobOnA = await signInThrough(a, BOB.oId, world.streams);
  const bobOnB = await signInThrough(b, BOB.oId, world.streams);

  const expected = [
    { oId: ALICE.oId, clients: 1, since: await signInRecorded(world, aliceOnA) },
    { oId: BOB.oId, clients: 2, since: await signInRecorded(world, bobOnA) },
  ];
  for (const node of [a, b]) {
    const seen = await eventually(async () => {
      const page = await presence(world, node);
      return JSON.stringify(brief(page)) === JSON.stringify(expected) && page;
    }, `${node.nodeId} to list alice and bob with their clients on both nodes`);
    assert.equal(brief(seen), expected);
  }
  assert.equal(await presence(world, a), await presence(world, b), 'the same answer from either node, cursors included');

  for (const node of [a, b]) {
    assert.is(await sample(node, 'presence_clients{node="pr-a"}'), 2, node.nodeId);
    assert.is(await sample(node, 'presence_clients{node="pr-b"}'), 1, node.nodeId);
    assert.is(await sample(node, 'presence_users{node="pr-a"}'), 2, node.nodeId);
    assert.is(await sample(node, 'presence_users{node="pr-b"}'), 1, node.nodeId);
    assert.is(await sample(node, 'presence_users_online'), 2, node.nodeId);
  }

  await a.kill();
  const after = await eventually(async () => {
    const page = await presence(world, b);
    return page.items.length === 1 && page;
  }, "pr-a's clients to leave presence on pr-b once its lease lapsed");
  assert.equal(brief(after), [{ oId: BOB.oId, clients: 1, since: await signInRecorded(world, bobOnB) }], "bob's client on pr-b stays, since its own sign-in");
  const alice = await presenceOf(world, b, ALICE.oId);
  assert.equal([alice.online, alice.clients, alice.since], [false, 0, undefined], 'alice, only on pr-a, is offline');
  assert.ok(!(await world.events(`client-${aliceOnA}`)).some((e) => e.type === 'ClientDisconnected'), 'nothing recorded her disconnect: the lease alone took her out');
  // The other answers about clients agree with presence: her client on pr-a is gone, and a push
  // finds her offline, bob online.
  const lookup = await b.request('GET', `/adm/user/get?client_id=${aliceOnA}`, { apiKey: world.key });
  assert.is(lookup.status, 404, lookup.text);
  const push = await b.request('POST', '/adm/message/push', { apiKey: world.key, body: { oIds: [ALICE.oId, BOB.oId], name: 'after-kill', data: {} } });
  assert.is(push.status, 200, push.text);
  assert.equal((push.body as { data: { online: string[]; offline: string[] } }).data, { online: [BOB.oId], offline: [ALICE.oId], unknown: [] });
  assert.is(await sample(b, 'presence_clients{node="pr-a"}'), undefined, 'the gone node has no series');
  assert.is(await sample(b, 'presence_clients{node="pr-b"}'), 1);
  assert.is(await sample(b, 'presence_users_online'), 1);
  await b.kill();
}
