// Webhooks against a real receiver on loopback (docs/api.md, "Webhooks"): a sign-in arrives
// signed and verifiable, then the disconnect after it; a receiver that fails three times gets the
// event four times with one id; a redirect is never followed; a rotated secret signs beside the
// new one; another app's key reaches none of it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { WebhookAttempts } from '../../src/contract/answers.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import { openWebhookWorld, type WebhookWorld } from './world.js';
import { verifySignature, type WebhookReceiver } from '../support/webhookReceiver.js';

const test = suite<WebhookWorld>('webhooks: delivery to a real receiver');

test.before(async (ctx) => {
  Object.assign(ctx, await openWebhookWorld(['webhooks:manage']));
});
test.after((ctx) => ctx.close());

const signedInEvent = (r: WebhookReceiver, clientId: string) =>
  eventually(() => r.arrivals.find((a) => a.event.type === 'client.signed_in' && a.event.data.clientId === clientId), `client.signed_in of ${clientId} at the receiver`);

test('a sign-in arrives signed, verifiable with the secret shown once, then its disconnect', async (ctx) => {
  const r = await ctx.receiver();
  const { id, secret } = await ctx.register(`${r.url}/hooks/bridge`);
  assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  const client = await ctx.signedInClient();
  const arrival = await signedInEvent(r, client.clientId);

  assert.is(arrival.path, '/hooks/bridge');
  assert.is(arrival.headers['content-type'], 'application/json');
  assert.is(arrival.headers['bridge-event-id'], arrival.event.id);
  assert.is(arrival.headers['bridge-event-type'], 'client.signed_in');
  assert.match(arrival.event.id, /^evt_\d+$/);
  assert.equal(Object.keys(arrival.event), ['id', 'type', 'created', 'app', 'data']);
  assert.is(arrival.event.app, 'game-one');
  assert.equal(arrival.event.data.user, {
    id: (arrival.event.data.user as { id: string }).id,
    oId: ALICE.oId,
    name: ALICE.userName,
    nickname: ALICE.nickname,
    avatar: ALICE.avatar,
  });
  const t = await verifySignature(arrival.headers['bridge-signature'], arrival.bytes, secret);
  assert.type(t, 'number', `the signature verifies: ${arrival.headers['bridge-signature']}`);
  assert.is(await verifySignature(arrival.headers['bridge-signature'], arrival.raw, `${secret}x`), undefined, 'another secret does not verify it');
  assert.is(await verifySignature(arrival.headers['bridge-signature'], arrival.raw.replace('game-one', 'game-two'), secret), undefined, 'a changed body does not verify');

  client.stream.close();
  const gone = await eventually(() => r.arrivals.find((a) => a.event.type === 'client.disconnected' && a.event.data.clientId === client.clientId), 'client.disconnected');
  assert.is(gone.event.data.reason, 'closed');
  assert.ok(r.arrivals.indexOf(gone) > r.arrivals.indexOf(arrival), 'the disconnect arrives after the sign-in');
  assert.ok(Number(gone.event.id.slice(4)) > Number(arrival.event.id.slice(4)));

  const attempts = await ctx.h.get<v.InferOutput<typeof WebhookAttempts>>(`/adm/webhooks/${id}/attempts`, ctx.key);
  assert.is(attempts.status, 200, attempts.text);
  const first = attempts.body.data.items.find((a) => a.eventId === arrival.event.id)!;
  assert.ok(first, attempts.text);
  assert.is(first.result, 'delivered');
  assert.is(first.status, 200);
  assert.is(first.attempt, 1);
  assert.is(first.response, 'ok');
  assert.type(first.durationMs, 'number');
});

test('a receiver that fails three times gets the event four times, with one id, and the attempts say so', async (ctx) => {
  const r = await ctx.receiver();
  r.script({ status: 500, body: 'down' }, { status: 503, body: 'still down' }, { status: 500, body: 'x'.repeat(5000) });
  const { id, secret } = await ctx.register(r.url, ['client.signed_in']);
  const client = await ctx.signedInClient(BOB.oId);
  const eventId = (await signedInEvent(r, client.clientId)).event.id;
  await eventually(() => r.of(eventId).length >= 4, { what: () => `four arrivals of ${eventId} (${r.of(eventId).length})` });
  const attempts = await eventually(async () => {
    const res = await ctx.h.get<v.InferOutput<typeof WebhookAttempts>>(`/adm/webhooks/${id}/attempts`, ctx.key);
    const items = res.body.data.items.filter((a) => a.eventId === eventId);
    return items.some((a) => a.result === 'delivered') && items;
  }, 'the delivered attempt recorded');

  // A later event for the endpoint: by the time it arrived, a fifth attempt would have been made.
  const later = await ctx.signedInClient(BOB.oId);
  await signedInEvent(r, later.clientId);
  const arrivals = r.of(eventId);
  assert.is(arrivals.length, 4);
  assert.ok(
    arrivals.every((a) => a.raw === arrivals[0]!.raw),
    'the same body each time',
  );
  for (const a of arrivals) assert.ok((await verifySignature(a.headers['bridge-signature'], a.bytes, secret)) !== undefined, 'each attempt signed');
  assert.equal(
    attempts.map((a) => [a.attempt, a.result, a.status]),
    [
      [4, 'delivered', 200],
      [3, 'failed', 500],
      [2, 'failed', 503],
      [1, 'failed', 500],
    ],
  );
  assert.ok(
    attempts.filter((a) => a.result === 'failed').every((a) => a.retryAt !== undefined),
    'each failure says when the next attempt is due',
  );
  assert.is(attempts.find((a) => a.attempt === 3)!.response!.length, 1024, 'the first 1 KiB of the answer is kept');
});

test('a redirect is not followed: the attempt fails with the status, and the target gets nothing', async (ctx) => {
  const [r, target] = [await ctx.receiver(), await ctx.receiver()];
  r.otherwise({ status: 302, headers: { location: `${target.url}/elsewhere` } });
  const { id } = await ctx.register(r.url, ['client.signed_in']);
  const client = await ctx.signedInClient();
  const eventId = (await signedInEvent(r, client.clientId)).event.id;
  // Retried, so redirected more than once: none of them reached the target.
  await eventually(() => r.of(eventId).length >= 2, 'a retry after the redirect');
  const attempts = await eventually(async () => {
    const items = (await ctx.h.get<v.InferOutput<typeof WebhookAttempts>>(`/adm/webhooks/${id}/attempts`, ctx.key)).body.data.items;
    return items.find((a) => a.eventId === eventId && a.result === 'failed');
  }, 'the redirected attempt recorded');
  assert.is(attempts.status, 302);
  assert.match(attempts.error!, /redirect to .*\/elsewhere not followed/);
  assert.is(target.arrivals.length, 0);
});

test('after a rotation both secrets sign, the new one first', async (ctx) => {
  const r = await ctx.receiver();
  const { id, secret: old } = await ctx.register(r.url, ['client.signed_in']);
  const rotated = await ctx.h.post(`/adm/webhooks/${id}/rotate`, undefined, ctx.key);
  assert.is(rotated.status, 200, rotated.text);
  const fresh: string = rotated.body.data.secret;
  assert.match(fresh, /^whsec_/);
  assert.is.not(fresh, old);
  assert.type(rotated.body.data.previousValidUntil, 'string');
  const client = await ctx.signedInClient();
  const arrival = await signedInEvent(r, client.clientId);
  const header = String(arrival.headers['bridge-signature']);
  assert.is(header.split(',').filter((part) => part.startsWith('v1=')).length, 2, header);
  assert.ok((await verifySignature(header, arrival.raw, fresh)) !== undefined, 'the new secret verifies');
  assert.ok((await verifySignature(header, arrival.raw, old)) !== undefined, 'the old secret verifies during the overlap');
  const [, firstV1] = header.split(',');
  assert.ok((await verifySignature(`${header.split(',')[0]},${firstV1}`, arrival.raw, fresh)) !== undefined, 'the new one is first');
});

test("another app's key reaches none of an app's endpoints", async (ctx) => {
  const r = await ctx.receiver();
  const { id } = await ctx.register(r.url, ['client.signed_in']);
  const other = (await ctx.h.key(['webhooks:manage'], 'game-two')).key;
  for (const [method, path] of [
    ['GET', `/adm/webhooks/${id}`],
    ['GET', `/adm/webhooks/${id}/attempts`],
    ['POST', `/adm/webhooks/${id}/rotate`],
    ['POST', `/adm/webhooks/${id}/disable`],
    ['DELETE', `/adm/webhooks/${id}`],
    ['POST', `/adm/webhooks/${id}/events/evt_1/resend`],
  ] as const) {
    const res = await ctx.h.request(method, path, { apiKey: other });
    assert.is(res.status, 404, `${method} ${path}: ${res.text}`);
    assert.is(res.body.data.reason, 'not_found');
  }
  const list = await ctx.h.get('/adm/webhooks', other);
  assert.equal(list.body.data.items, []);
  const foreign = await ctx.h.post('/adm/webhooks', { url: r.url, events: ['client.signed_in'], appId: 'game-one' }, other);
  assert.is(foreign.status, 400, foreign.text);
  assert.is(foreign.body.data.issues[0].field, 'appId');
  const auditor = (await ctx.h.key(['webhooks:manage'], 'auditors', { allApps: true })).key;
  const seen = await ctx.h.get(`/adm/webhooks?appId=game-one`, auditor);
  assert.ok(
    seen.body.data.items.some((e: { id: string }) => e.id === id),
    'an all-apps key sees it',
  );
  const noPermission = await ctx.h.get('/adm/webhooks', (await ctx.h.key(['audit:read'], 'game-one')).key);
  assert.is(noPermission.status, 403);
});

test.run();
