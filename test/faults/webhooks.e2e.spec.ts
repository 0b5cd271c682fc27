// Webhooks across nodes on one SQLite store, with real service processes and a real receiver on
// loopback: the node that delivers is SIGKILLed while the receiver holds its request, and the
// event arrives again from another node; two live nodes never both send an event. Every arrival
// has its own attempt record in the log (exactly once per attempt record), and only one records
// the delivery.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import type { LoggedEvent, ServiceProcess } from '../support/serviceProcess.js';
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from '../support/webhookReceiver.js';
import { openWorld, signInThrough, type World } from './world.js';

// A node's lease lapses within 1.5 s; an attempt held open is never timed out by the sender first.
const SUITE_ENV = { NODE_HEARTBEAT_MS: '200', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_TIMEOUT_MS: '60000', WEBHOOKS_RETRY_FIRST_MS: '50' };

type Ctx = { world: World; receiver: WebhookReceiver; streams: Array<{ close(): void }> };
const test = suite<Ctx>('webhooks across nodes: one sender at a time, nothing lost to a kill');

test.before(async (ctx) => {
  ctx.world = await openWorld(SUITE_ENV);
  ctx.receiver = await startWebhookReceiver();
  ctx.streams = [];
});
test.after(async ({ world, receiver, streams }) => {
  for (const stream of streams) stream.close();
  await world.close();
  await receiver.close();
});

async function register(ctx: Ctx, node: ServiceProcess): Promise<{ id: string; secret: string }> {
  const res = await node.request('POST', '/adm/webhooks', { body: { url: ctx.receiver.url, events: ['client.signed_in'] }, apiKey: ctx.world.key });
  assert.is(res.status, 200, res.text);
  return { id: res.body.data.endpoint.id, secret: res.body.data.secret };
}

async function unregister(ctx: Ctx, node: ServiceProcess, id: string): Promise<void> {
  const res = await node.request('DELETE', `/adm/webhooks/${id}`, { apiKey: ctx.world.key });
  assert.is(res.status, 200, res.text);
}

const arrivalOf = (ctx: Ctx, clientId: string) =>
  eventually(() => ctx.receiver.arrivals.find((a) => a.event.data.clientId === clientId), { what: `the sign-in of ${clientId} at the receiver`, timeoutMs: 20_000 });

/** The delivery's stream in the log: its attempts started and finished. */
function deliveryLog(ctx: Ctx, endpointId: string, eventId: string) {
  const events = ctx.world.log.stream(`webhookdelivery-${endpointId}-${eventId.slice('evt_'.length)}`);
  return {
    started: events.filter((e): e is LoggedEvent<'WebhookAttemptStarted'> => e.type === 'WebhookAttemptStarted'),
    finished: events.filter((e): e is LoggedEvent<'WebhookAttemptFinished'> => e.type === 'WebhookAttemptFinished'),
  };
}

/** Once its success is recorded: as many arrivals as attempt records, each attempt numbered once, one success. */
async function assertOncePerAttemptRecord(ctx: Ctx, endpointId: string, eventId: string, secret: string) {
  await eventually(() => deliveryLog(ctx, endpointId, eventId).finished.some((e) => e.data.delivered), { what: `the delivery of ${eventId} recorded`, timeoutMs: 20_000 });
  const { started, finished } = deliveryLog(ctx, endpointId, eventId);
  const arrivals = ctx.receiver.of(eventId);
  assert.is(arrivals.length, started.length, `arrivals of ${eventId} (${arrivals.length}) = attempt records (${started.length})`);
  assert.equal(
    started.map((e) => e.data.attempt),
    started.map((_, i) => i + 1),
    'attempts numbered once each',
  );
  assert.is(finished.filter((e) => e.data.delivered).length, 1, 'one success recorded');
  for (const arrival of arrivals) assert.ok((await verifySignature(arrival.headers['bridge-signature'], arrival.raw, secret)) !== undefined, 'each arrival is signed');
  return { started, finished, arrivals };
}

test('the delivering node is killed while the receiver holds its request: another live node sends it again once the lease lapses', async (ctx) => {
  const a = await ctx.world.start('wh-1a');
  const b = await ctx.world.start('wh-1b');
  const { id, secret } = await register(ctx, b);
  ctx.receiver.script({ hold: true });
  const clientId = await signInThrough(b, ALICE.oId, ctx.streams);
  const held = await arrivalOf(ctx, clientId);
  const eventId = held.event.id;
  assert.equal(
    deliveryLog(ctx, id, eventId).started.map((e) => e.data.node),
    ['wh-1a'],
    'the least live NODE_ID sends, and recorded the attempt first',
  );
  assert.is(deliveryLog(ctx, id, eventId).finished.length, 0);

  await a.kill();
  const { started, finished, arrivals } = await assertOncePerAttemptRecord(ctx, id, eventId, secret);
  assert.equal(
    started.map((e) => [e.data.attempt, e.data.node]),
    [
      [1, 'wh-1a'],
      [2, 'wh-1b'],
    ],
  );
  assert.equal(
    finished.map((e) => [e.data.attempt, e.data.delivered]),
    [[2, true]],
    'the killed attempt has no result; the second one delivered',
  );
  assert.ok(
    arrivals.every((arrival) => arrival.raw === held.raw),
    'the same event, same id and body',
  );
  const attempts = await b.request('GET', `/adm/webhooks/${id}/attempts`, { apiKey: ctx.world.key });
  assert.equal(
    attempts.body.data.items.filter((x: { eventId: string }) => x.eventId === eventId).map((x: { attempt: number; result: string }) => [x.attempt, x.result]),
    [
      [2, 'delivered'],
      [1, 'interrupted'],
    ],
  );
  await unregister(ctx, b, id);
  await b.kill();
});

test('a node alone is killed mid-delivery: after a restart on another node the event arrives, exactly once per attempt record', async (ctx) => {
  const a = await ctx.world.start('wh-2a');
  const { id, secret } = await register(ctx, a);
  ctx.receiver.script({ hold: true });
  const clientId = await signInThrough(a, BOB.oId, ctx.streams);
  const eventId = (await arrivalOf(ctx, clientId)).event.id;
  await a.kill();
  assert.is(deliveryLog(ctx, id, eventId).finished.length, 0, 'nothing recorded after the start of the attempt');

  const b = await ctx.world.start('wh-2b');
  const { started } = await assertOncePerAttemptRecord(ctx, id, eventId, secret);
  assert.equal(
    started.map((e) => e.data.node),
    ['wh-2a', 'wh-2b'],
  );
  await unregister(ctx, b, id);
  await b.kill();
});

test('two live nodes: every event is sent once, by one node, whichever node the user signed in on', async (ctx) => {
  const a = await ctx.world.start('wh-3a');
  const b = await ctx.world.start('wh-3b');
  const { id, secret } = await register(ctx, a);
  const clients: string[] = [];
  for (let i = 0; i < 6; i++) clients.push(await signInThrough(i % 2 === 0 ? a : b, i % 3 === 0 ? ALICE.oId : BOB.oId, ctx.streams));
  for (const clientId of clients) {
    const { event } = await arrivalOf(ctx, clientId);
    const { started } = await assertOncePerAttemptRecord(ctx, id, event.id, secret);
    assert.equal(
      started.map((e) => e.data.node),
      ['wh-3a'],
      'sent by the leading node only',
    );
    assert.is(ctx.receiver.of(event.id).length, 1);
  }
  await unregister(ctx, a, id);
});

test.run();
