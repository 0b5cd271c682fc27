// What happens around a delivery (docs/api.md, "Webhooks"), against a real receiver on loopback:
// one user's events keep their order while the first is retried; a disabled endpoint is sent
// nothing and its deliveries wait for it; an event is sent again on demand; a deleted endpoint is
// gone; an operation's outcome, its unknown outcome and its resolution reach only its own app's
// endpoints.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import { openWebhookWorld, type WebhookWorld } from './world.js';
import type { Arrival, WebhookReceiver } from '../support/webhookReceiver.js';

const test = suite<WebhookWorld>('webhooks: order, disabling, resending, deleting, operations');

test.before(async (ctx) => {
  Object.assign(ctx, await openWebhookWorld(['*']));
});
test.after((ctx) => ctx.close());

const arrival = (r: WebhookReceiver, what: string, match: (a: Arrival) => boolean) => eventually(() => r.arrivals.find(match), `${what} at the receiver`);
const ofClient = (clientId: string, type: string) => (a: Arrival) => a.event.type === type && a.event.data.clientId === clientId;
/** The delivery streams of an endpoint in the log. */
const deliveryStreams = async (ctx: WebhookWorld, endpointId: string) => new Set((await ctx.h.events(`webhookdelivery-${endpointId}-`)).map((e) => e.streamName));

test("one user's events keep their order: the disconnect waits while the sign-in before it is retried", async (ctx) => {
  const r = await ctx.receiver();
  r.script({ status: 500 }, { status: 500 });
  await ctx.register(r.url, ['client.signed_in', 'client.disconnected']);
  const client = await ctx.signedInClient(ALICE.oId);
  client.stream.close();
  const gone = await arrival(r, 'the disconnect', ofClient(client.clientId, 'client.disconnected'));
  const signedIn = r.arrivals.filter(ofClient(client.clientId, 'client.signed_in'));
  assert.is(signedIn.length, 3, 'the sign-in failed twice, then was delivered');
  assert.ok(r.arrivals.indexOf(gone) > r.arrivals.indexOf(signedIn[2]!), 'the disconnect came after the sign-in was delivered');
  assert.is(r.arrivals.filter(ofClient(client.clientId, 'client.disconnected')).length, 1);
});

test('a disabled endpoint is sent nothing: what it still had to receive waits for it, what happens meanwhile is not for it', async (ctx) => {
  const [r, witness] = [await ctx.receiver(), await ctx.receiver()];
  r.otherwise({ status: 503 });
  const { id } = await ctx.register(r.url, ['client.signed_in']);
  const before = await ctx.signedInClient(BOB.oId);
  await arrival(r, 'the failing sign-in', ofClient(before.clientId, 'client.signed_in'));
  const disabled = await ctx.h.post(`/adm/webhooks/${id}/disable`, undefined, ctx.key);
  assert.is(disabled.status, 200, disabled.text);
  assert.equal([disabled.body.data.status, disabled.body.data.disabled.reason], ['disabled', 'requested']);
  assert.is(disabled.body.data.pending, 1, 'the failing delivery waits');
  // An attempt begun before the endpoint was disabled ends; none begins after.
  await eventually(() => ctx.h.service.webhooks.sending === 0, 'the attempt in flight ended');
  assert.is((await deliveryStreams(ctx, id)).size, 1);
  const tries = (await ctx.h.events(`webhookdelivery-${id}-`)).length;

  await ctx.register(witness.url, ['client.signed_in']);
  const meanwhile = await ctx.signedInClient(BOB.oId);
  // The witness endpoint got the later event: the deliverer has run over both endpoints since.
  await arrival(witness, 'the later sign-in', ofClient(meanwhile.clientId, 'client.signed_in'));
  assert.is((await ctx.h.events(`webhookdelivery-${id}-`)).length, tries, 'no attempt recorded while disabled');
  assert.not.ok(r.arrivals.some(ofClient(meanwhile.clientId, 'client.signed_in')));

  r.otherwise({ status: 200 });
  const enabled = await ctx.h.post(`/adm/webhooks/${id}/enable`, undefined, ctx.key);
  assert.is(enabled.body.data.status, 'enabled');
  assert.is(enabled.body.data.disabled, undefined);
  await eventually(async () => (await ctx.h.get(`/adm/webhooks/${id}`, ctx.key)).body.data.pending === 0, 'the waiting delivery made');
  const [last] = (await ctx.h.get(`/adm/webhooks/${id}/attempts`, ctx.key)).body.data.items;
  assert.equal([last.eventId, last.result], [r.arrivals.find(ofClient(before.clientId, 'client.signed_in'))!.event.id, 'delivered']);
  assert.not.ok(r.arrivals.some(ofClient(meanwhile.clientId, 'client.signed_in')), 'the event of while it was disabled is not delivered');
  assert.is((await deliveryStreams(ctx, id)).size, 1);
});

test('an event is sent again on demand, same id and body; not while the endpoint is disabled, nor one never sent', async (ctx) => {
  const r = await ctx.receiver();
  const { id } = await ctx.register(r.url, ['client.signed_in']);
  const client = await ctx.signedInClient(ALICE.oId);
  const first = await arrival(r, 'the sign-in', ofClient(client.clientId, 'client.signed_in'));
  await eventually(
    async () => (await ctx.h.get(`/adm/webhooks/${id}/attempts`, ctx.key)).body.data.items.some((a: { result: string }) => a.result === 'delivered'),
    'the success recorded',
  );
  const resent = await ctx.h.post(`/adm/webhooks/${id}/events/${first.event.id}/resend`, undefined, ctx.key);
  assert.is(resent.status, 200, resent.text);
  assert.is(resent.body.data.eventId, first.event.id);
  await eventually(() => r.of(first.event.id).length === 2, 'the event again');
  assert.is(r.of(first.event.id)[1]!.raw, first.raw);
  const attempts = await eventually(async () => {
    const items = (await ctx.h.get(`/adm/webhooks/${id}/attempts`, ctx.key)).body.data.items as Array<{ attempt: number; result: string }>;
    return items.length === 2 && items.every((a) => a.result === 'delivered') && items;
  }, 'both attempts delivered');
  assert.equal(
    attempts.map((a) => a.attempt),
    [2, 1],
  );

  const never = await ctx.h.post(`/adm/webhooks/${id}/events/evt_1/resend`, undefined, ctx.key);
  assert.is(never.status, 404, never.text);
  await ctx.h.post(`/adm/webhooks/${id}/disable`, undefined, ctx.key);
  const whileDisabled = await ctx.h.post(`/adm/webhooks/${id}/events/${first.event.id}/resend`, undefined, ctx.key);
  assert.is(whileDisabled.status, 409, whileDisabled.text);
  assert.match(whileDisabled.body.message, /is disabled: enable it first/);
});

test('a deleted endpoint is gone: 404, out of the list, and sent nothing more', async (ctx) => {
  const [r, witness] = [await ctx.receiver(), await ctx.receiver()];
  const { id } = await ctx.register(r.url, ['client.signed_in']);
  const deleted = await ctx.h.request('DELETE', `/adm/webhooks/${id}`, { apiKey: ctx.key });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(deleted.body.data, { id, deleted: true });
  assert.is((await ctx.h.get(`/adm/webhooks/${id}`, ctx.key)).status, 404);
  assert.is((await ctx.h.request('DELETE', `/adm/webhooks/${id}`, { apiKey: ctx.key })).status, 404, 'deleting twice: it is not there');
  assert.not.ok((await ctx.h.get('/adm/webhooks', ctx.key)).body.data.items.some((e: { id: string }) => e.id === id));
  await ctx.register(witness.url, ['client.signed_in']);
  const client = await ctx.signedInClient(BOB.oId);
  await arrival(witness, 'the sign-in', ofClient(client.clientId, 'client.signed_in'));
  assert.is(r.arrivals.length, 0);
  assert.is((await deliveryStreams(ctx, id)).size, 0);
});

test("an operation's outcome, unknown outcome and resolution reach its own app's endpoints only, in order", async (ctx) => {
  const [mine, theirs] = [await ctx.receiver(), await ctx.receiver()];
  const operationTypes = ['operation.outcome_known', 'operation.outcome_unknown', 'operation.resolved'];
  await ctx.register(mine.url, operationTypes);
  const otherKey = (await ctx.h.key(['*'], 'game-two')).key;
  const { id: theirsId } = await ctx.register(theirs.url, [...operationTypes, 'client.signed_in'], otherKey);

  const applied = await ctx.h.post('/adm/points/edit', { oId: ALICE.oId, point: 3, memo: 'webhook known' }, ctx.key);
  assert.is(applied.status, 200, applied.text);
  ctx.h.sim.faultNext('/user/edit/points', { kind: 'hang' });
  const unknown = await ctx.h.post('/adm/points/edit', { oId: ALICE.oId, point: 4, memo: 'webhook unknown' }, ctx.key);
  assert.is(unknown.status, 504, unknown.text);
  const operationId = unknown.body.data.operationId;
  const resolved = await ctx.h.post(`/adm/operations/${operationId}/resolve`, { applied: false, note: 'not in the ledger' }, ctx.key);
  assert.is(resolved.status, 200, resolved.text);

  const done = await arrival(mine, 'the resolution', (a) => a.event.type === 'operation.resolved');
  assert.equal(done.event.data, { operationId, kind: 'points.edit', oId: ALICE.oId, userId: done.event.data.userId, applied: false, note: 'not in the ledger' });
  assert.equal(
    mine.arrivals.map((a) => a.event.type),
    operationTypes,
    'in log order',
  );
  const [known, unknownEvent] = mine.arrivals;
  assert.equal([known!.event.data.status, known!.event.data.kind, known!.event.data.oId], ['applied', 'points.edit', ALICE.oId]);
  assert.is(unknownEvent!.event.data.operationId, operationId);
  assert.type(unknownEvent!.event.data.reason, 'string');
  assert.ok(
    mine.arrivals.every((a) => a.event.app === 'game-one'),
    'addressed to the app',
  );

  // game-two hears of a later sign-in; no delivery of game-one's operations was ever made for it.
  const client = await ctx.signedInClient(BOB.oId);
  await arrival(theirs, 'the sign-in', ofClient(client.clientId, 'client.signed_in'));
  assert.equal(
    theirs.arrivals.map((a) => a.event.type),
    ['client.signed_in'],
  );
  assert.is((await deliveryStreams(ctx, theirsId)).size, 1);
});

test.run();
