// `cli webhooks`: an operator adds an app's endpoint on the store a running service uses; the
// secret the CLI prints once verifies what the service then sends (both seal it under the data
// directory's session secret); attempts, resend, rotate, disable, enable and remove work on it,
// and bad input is refused naming the flag.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { cliJson, runToEnd } from '../support/serviceProcess.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from '../support/webhookReceiver.js';

type Ctx = { h: Harness; receiver: WebhookReceiver; streams: Array<{ close(): void }> };
const test = suite<Ctx>('cli webhooks');

const ALLOW = { WEBHOOKS_ALLOW_PRIVATE: 'true' };
const webhooks = (ctx: Ctx, env: Record<string, string>, ...args: string[]) => runToEnd(['webhooks', ...args], { DATA_DIR: ctx.h.dataDir, ...env });

test.before(async (ctx) => {
  ctx.h = await startHarness({ env: ALLOW });
  await ctx.h.key(['*'], 'game-one');
  ctx.receiver = await startWebhookReceiver();
  ctx.streams = [];
});
test.after(async ({ h, receiver, streams }) => {
  for (const stream of streams) stream.close();
  await h.close();
  await receiver.close();
});

test('add prints the secret once; the running service sends signed events it verifies; attempts, resend, rotate, disable, enable, remove', async (ctx) => {
  const added = cliJson<{ endpoint: { id: string; status: string }; secret: string }>(
    await webhooks(ctx, ALLOW, 'add', '--app-id', 'game-one', '--url', `${ctx.receiver.url}/cli`, '--events', 'client.signed_in', '--json'),
  );
  assert.match(added.secret, /^whsec_/);
  const id = added.endpoint.id;
  const human = await webhooks(ctx, {}, 'list');
  assert.match(human.stdout, new RegExp(`^ID +APP ID[^\\n]*\\n${id} +game-one +enabled +0 +client\\.signed_in +${ctx.receiver.url}/cli`));

  await ctx.h.caughtUp();
  const client = await connect(ctx.h);
  ctx.streams.push(client.stream);
  await signIn(ctx.h, client.clientId, ALICE.oId);
  const arrival = await eventually(() => ctx.receiver.arrivals.find((a) => a.event.data.clientId === client.clientId), 'the sign-in at the receiver');
  assert.ok((await verifySignature(arrival.headers['bridge-signature'], arrival.raw, added.secret)) !== undefined, 'the secret the CLI printed verifies it');
  const eventId = arrival.event.id;

  const attempts = await eventually(async () => {
    const listed = cliJson<Array<{ eventId: string; result: string }>>(await webhooks(ctx, {}, 'attempts', id, '--json'));
    return listed.some((a) => a.eventId === eventId && a.result === 'delivered') && listed;
  }, 'the delivered attempt in the log');
  assert.is(attempts.length, 1);

  const resent = await webhooks(ctx, {}, 'resend', id, eventId);
  assert.is(resent.code, 0, resent.stderr);
  await eventually(() => ctx.receiver.of(eventId).length === 2, 'the event sent again');
  assert.is(ctx.receiver.of(eventId)[1]!.raw, arrival.raw, 'the same event');

  const rotated = cliJson<{ secret: string; previousValidUntil: string }>(await webhooks(ctx, {}, 'rotate', id, '--json'));
  assert.match(rotated.secret, /^whsec_/);
  assert.is.not(rotated.secret, added.secret);

  assert.match((await webhooks(ctx, {}, 'disable', id)).stdout, new RegExp(`${id} is disabled`));
  const refused = await webhooks(ctx, {}, 'resend', id, eventId);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /is disabled: enable it first/);
  assert.match((await webhooks(ctx, {}, 'enable', id)).stdout, new RegExp(`${id} is enabled`));
  assert.match((await webhooks(ctx, {}, 'remove', id)).stdout, new RegExp(`${id} is deleted`));
  assert.equal(cliJson(await webhooks(ctx, {}, 'list', '--json')), []);
  const gone = await webhooks(ctx, {}, 'attempts', id);
  assert.is(gone.code, 1);
  assert.match(gone.stderr, /No webhook endpoint with id/);
});

test('bad input is refused naming the flag, and a loopback URL needs WEBHOOKS_ALLOW_PRIVATE', async (ctx) => {
  const cases: Array<[string[], RegExp, Record<string, string>?]> = [
    [['add', '--app-id', 'game-one', '--url', ctx.receiver.url, '--events', 'client.signed_in,user.deleted'], /^--events: unknown event type user\.deleted/m],
    [['add', '--app-id', 'game-one', '--url', ctx.receiver.url], /^--events: required/m],
    [['add', '--app-id', 'no-such-app', '--url', ctx.receiver.url, '--events', 'client.signed_in'], /^--app-id: no app has the id no-such-app/m],
    [['add', '--app-id', 'game-one', '--url', 'http://game.example/hook', '--events', 'client.signed_in'], /^--url: must be https/m],
    [
      ['add', '--app-id', 'game-one', '--url', ctx.receiver.url, '--events', 'client.signed_in'],
      /^--url: must not be a loopback address \(WEBHOOKS_ALLOW_PRIVATE=true allows it\)/m,
      {},
    ],
    [['attempts', 'abcdefghijklmno', '--limit', '0'], /^--limit: must be a whole number from 1 to 200/m],
    [['frobnicate'], /^webhooks: unknown action "frobnicate"/m],
  ];
  for (const [args, message, env = ALLOW] of cases) {
    const run = await webhooks(ctx, env, ...args);
    assert.is(run.code, 1, `${args.join(' ')}: exit ${run.code} ${run.stdout}`);
    assert.match(run.stderr, message, args.join(' '));
  }
  assert.equal(cliJson(await webhooks(ctx, {}, 'list', '--json')), [], 'nothing was added');
});

test.run();
