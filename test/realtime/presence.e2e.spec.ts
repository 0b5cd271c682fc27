// Presence on one node (docs/api.md, "Presence"), against a real service with real SSE clients
// signed in through the platform simulator: who is online and since when (the time the log
// recorded the earliest live sign-in), one user's presence, paging with cursors, every app's key
// seeing the same users, the permission, and the counts in /metrics. The suite across nodes,
// with one killed, is test/faults/presence.e2e.spec.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { PresenceAnswer, PresencePage } from '../../src/contract/answers.js';
import { toSpecTimestamp } from '../../src/domain/time.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, defaultUsers, startHarness, type Harness } from '../support/harness.js';
import { applied, connect, signIn } from '../support/streamsAndSignIn.js';

type Page = v.InferOutput<typeof PresencePage>;
type One = v.InferOutput<typeof PresenceAnswer>;

/** Five more users on the platform, for paging. */
const MORE = Array.from({ length: 5 }, (_, i) => ({ oId: `16303991369${String(i).padStart(2, '0')}`, userName: `player${i}`, nickname: `Player ${i}` }));

interface Ctx {
  h: Harness;
  key: string;
  streams: Array<{ close(): void }>;
}
const test = suite<Ctx>('presence on one node');

test.before(async (ctx) => {
  ctx.h = await startHarness({ users: [...defaultUsers(), ...MORE], env: { NODE_ID: 'solo' } });
  ctx.key = (await ctx.h.key(['presence:read'], 'game-one')).key;
  ctx.streams = [];
});
test.after(async ({ h, streams }) => {
  for (const stream of streams) stream.close();
  await h.close();
});

/** A client of `oId` signed in through the login page; its stream stays open. Answers its client id and session cookie. */
async function signedIn(ctx: Ctx, oId: string) {
  const client = await connect(ctx.h);
  ctx.streams.push(client.stream);
  const cookie = await signIn(ctx.h, client.clientId, oId);
  return { ...client, cookie };
}

/** The time the log recorded for the event that signed this client in, as the API writes times. */
async function signInRecorded(h: Harness, clientId: string): Promise<string> {
  const event = (await h.events(`client-${clientId}`)).find((e) => e.type === 'ClientSignedIn' || (e.type === 'ClientConnected' && 'session' in (e.data as object)));
  assert.ok(event, `the sign-in of ${clientId} in the log`);
  return toSpecTimestamp(event!.created);
}

const list = (ctx: Ctx, query = '', key = ctx.key) => ctx.h.get<Page>(`/adm/presence${query}`, key);
const one = (ctx: Ctx, oId: string) => ctx.h.get<One>(`/adm/presence/${oId}`, ctx.key);

test('without presence:read: 403 naming it; with it, nobody is online yet', async (ctx) => {
  const { key: other } = await ctx.h.key(['user:get', 'audit:read'], 'game-one');
  for (const path of ['/adm/presence', `/adm/presence/${ALICE.oId}`]) {
    const denied = await ctx.h.get(path, other);
    assert.is(denied.status, 403, path);
    assert.equal(denied.body, { code: 403, message: 'No permission to access this resource', data: {} });
    assert.is(denied.headers.get('x-missing-permission'), 'presence:read');
  }
  const empty = await list(ctx);
  assert.is(empty.status, 200, empty.text);
  assert.equal(empty.body, { code: 0, msg: 'success', data: { items: [] } });
  assert.equal((await one(ctx, ALICE.oId)).body.data, { oId: ALICE.oId, online: false, clients: 0 }, 'a user the service never saw');
});

test('users online with their clients and the earliest sign-in the log recorded; one user; offline once closed', async (ctx) => {
  const alice = await signedIn(ctx, ALICE.oId);
  const bob = await signedIn(ctx, BOB.oId);
  // A second connection of alice's browser starts signed in by its session cookie.
  const again = await connect(ctx.h, { cookie: alice.cookie });
  assert.is(again.hello.data.login_status, true);
  const since = await signInRecorded(ctx.h, alice.clientId);
  assert.ok((await signInRecorded(ctx.h, again.clientId)) >= since);

  const page = await list(ctx);
  assert.is(page.status, 200, page.text);
  assert.equal(
    page.body.data.items.map(({ oId, name, nickname, clients, since }) => ({ oId, name, nickname, clients, since })),
    [
      { oId: ALICE.oId, name: ALICE.userName, nickname: ALICE.nickname, clients: 2, since },
      { oId: BOB.oId, name: BOB.userName, nickname: BOB.nickname, clients: 1, since: await signInRecorded(ctx.h, bob.clientId) },
    ],
  );
  assert.ok(page.body.data.items[0]!.position < page.body.data.items[1]!.position);
  assert.is(page.body.data.next, undefined);

  const aliceNow = await one(ctx, ALICE.oId);
  assert.equal(aliceNow.body.data, { oId: ALICE.oId, online: true, clients: 2, since, userId: page.body.data.items[0]!.userId });

  // Her first client closes: the other one still counts, with its own sign-in as `since`.
  const closed = applied(ctx.h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === alice.clientId);
  alice.stream.close();
  await closed;
  assert.equal((await one(ctx, ALICE.oId)).body.data, {
    oId: ALICE.oId,
    online: true,
    clients: 1,
    since: await signInRecorded(ctx.h, again.clientId),
    userId: aliceNow.body.data.userId,
  });
  const gone = applied(ctx.h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === again.clientId);
  again.stream.close();
  await gone;
  assert.equal((await one(ctx, ALICE.oId)).body.data, { oId: ALICE.oId, online: false, clients: 0, userId: aliceNow.body.data.userId }, 'known, and offline');
  assert.equal(
    (await list(ctx)).body.data.items.map((e) => e.oId),
    [BOB.oId],
  );
  // Bob stays for the next tests.
});

test('paging: limit, after=next and before=prev walk the users online in order, like the audit', async (ctx) => {
  for (const user of MORE) await signedIn(ctx, user.oId);
  const all = (await list(ctx, '?limit=500')).body.data.items;
  assert.equal(
    all.map((e) => e.oId),
    [BOB.oId, ...MORE.map((u) => u.oId)],
  );
  const seen: string[] = [];
  let page = (await list(ctx, '?limit=2')).body.data;
  assert.is(page.prev, undefined);
  for (;;) {
    seen.push(...page.items.map((e) => e.oId));
    if (page.next === undefined) break;
    assert.ok(page.items.length === 2);
    page = (await list(ctx, `?limit=2&after=${page.next}`)).body.data;
  }
  assert.equal(
    seen,
    all.map((e) => e.oId),
  );
  const last = await list(ctx, `?limit=2&before=${all.at(-1)!.position}`);
  assert.equal(
    last.body.data.items.map((e) => e.oId),
    all.slice(-3, -1).map((e) => e.oId),
  );
  assert.is(last.body.data.prev, all.at(-3)!.position);
  assert.is(last.body.data.next, all.at(-2)!.position);
  for (const bad of ['?limit=0', '?limit=501', '?after=x', '?before=-1']) {
    const res = await ctx.h.get(`/adm/presence${bad}`, ctx.key);
    assert.is(res.status, 400, `${bad}: ${res.text}`);
    assert.is(res.body.data.reason, 'validation_failed');
  }
});

test("realtime clients are no app's: every app's key sees the same users", async (ctx) => {
  const { key: otherApp } = await ctx.h.key(['presence:read'], 'game-two');
  const { key: allApps } = await ctx.h.key(['presence:read'], 'auditors', { allApps: true });
  const { key: everything } = await ctx.h.key(['*'], 'game-three');
  const mine = (await list(ctx)).body;
  assert.ok(mine.data.items.length > 0);
  for (const key of [otherApp, allApps, everything]) assert.equal((await list(ctx, '', key)).body, mine);
});

test('/metrics: signed-in clients and users online by node', async (ctx) => {
  const online = (await list(ctx, '?limit=500')).body.data.items;
  const clients = online.reduce((n, e) => n + e.clients, 0);
  const metrics = await eventually(async () => {
    const text = (await ctx.h.get('/metrics')).text;
    return text.includes(`presence_clients{node="solo"} ${clients}`) && text;
  }, 'the presence gauges');
  assert.match(metrics, `presence_users{node="solo"} ${online.length}`);
  assert.match(metrics, `presence_users_online ${online.length}`);
  assert.match(metrics, /webhook_deliveries_pending 0/);
});

test.run();
