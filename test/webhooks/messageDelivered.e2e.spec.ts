// message.delivered against a real receiver on loopback (docs/api.md, "Webhooks"): a push that
// reaches a signed-in client arrives signed and verifiable, naming the ids as the push gave them
// that had a signed-in client open, and the X-Request-Id of the push; a push that reaches nobody,
// and another app's push, cause none; /metrics counts the attempt.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { WebhookAnswer, WebhookAttempts } from '../../src/contract/answers.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import { verifySignature } from '../support/webhookReceiver.js';
import { openWebhookWorld, type WebhookWorld } from './world.js';

const test = suite<WebhookWorld>('webhooks: message.delivered');

test.before(async (ctx) => {
  Object.assign(ctx, await openWebhookWorld(['webhooks:manage', 'message:push']));
});
test.after((ctx) => ctx.close());

test("a push that reaches a signed-in client arrives signed, with the ids that were online; nobody's push and another app's cause none", async (ctx) => {
  const r = await ctx.receiver();
  const { id, secret } = await ctx.register(r.url, ['message.delivered']);
  await ctx.signedInClient(ALICE.oId);
  const aliceId = ctx.h.service.deps.readModels.users.byOid(ALICE.oId)!.id;
  const push = async (body: object, key = ctx.key, requestId?: string) => {
    const res = await ctx.h.request('POST', '/adm/message/push', {
      body: { name: 'reward', data: { gold: 5 }, ...body },
      apiKey: key,
      headers: requestId ? { 'X-Request-Id': requestId } : {},
    });
    assert.is(res.status, 200, res.text);
    return res.body.data;
  };

  const { key: otherApp } = await ctx.h.key(['message:push'], 'game-two');
  await push({ oIds: [ALICE.oId] }, otherApp);
  assert.equal(await push({ oIds: [BOB.oId, '42'] }), { online: [], offline: [], unknown: [BOB.oId, '42'] });
  assert.equal(await push({ oIds: [ALICE.oId, BOB.oId, '42'], userIds: [aliceId] }, ctx.key, 'push-delivered-1'), {
    online: [ALICE.oId, aliceId],
    offline: [],
    unknown: [BOB.oId, '42'],
  });

  const arrival = await eventually(() => r.arrivals.find((a) => a.event.type === 'message.delivered'), 'message.delivered at the receiver');
  assert.is(arrival.headers['bridge-event-type'], 'message.delivered');
  assert.is(arrival.event.app, 'game-one');
  const { messageId, ...data } = arrival.event.data as { messageId: string };
  assert.match(messageId, /^[a-z0-9]+$/);
  assert.equal(data, { name: 'reward', requestId: 'push-delivered-1', oIds: [ALICE.oId], userIds: [aliceId] });
  assert.ok((await verifySignature(arrival.headers['bridge-signature'], arrival.bytes, secret)) !== undefined, 'signed with the secret shown once');

  // Every delivery the endpoint had is made: the one event above, nothing for the other two pushes.
  const attempts = await eventually(async () => {
    const endpoint = await ctx.h.get<v.InferOutput<typeof WebhookAnswer>>(`/adm/webhooks/${id}`, ctx.key);
    if (endpoint.body.data.pending > 0) return undefined;
    return (await ctx.h.get<v.InferOutput<typeof WebhookAttempts>>(`/adm/webhooks/${id}/attempts`, ctx.key)).body.data.items;
  }, 'no delivery left to make');
  assert.equal(
    attempts.map((a) => [a.eventId, a.type, a.result]),
    [[arrival.event.id, 'message.delivered', 'delivered']],
  );
  assert.is(r.arrivals.length, 1);
  const metrics = (await ctx.h.get('/metrics')).text;
  assert.match(metrics, /^webhook_attempts_total\{result="delivered"\} 1$/m, 'this node made the one attempt');
  assert.match(metrics, /^webhook_deliveries_pending 0$/m);
});

test.run();
