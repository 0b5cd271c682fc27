// The console's webhooks API against a real service and a real receiver on loopback: an operator
// adds an app's endpoint (its secret shown once), sees its attempts, sends an event again, and
// disables, enables, rotates and deletes it, each change recorded with the operator as `by`; bad
// input is a 400 naming the field.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, withHarness } from '../support/harness.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { startWebhookReceiver } from '../support/webhookReceiver.js';
import { consoleGet, consolePost, signInOperator } from './operatorSignIn.js';

const ON = { CONSOLE_ADMINS: ALICE.oId, WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_FIRST_MS: '40' };
const BY = { kind: 'operator', name: `console:${ALICE.oId}` };

test('an operator adds an endpoint, sees its attempts, sends an event again, and disables, enables, rotates and deletes it', () =>
  withHarness(ON, async (h) => {
    const receiver = await startWebhookReceiver();
    const client = await connect(h);
    try {
      await h.key(['vip:read'], 'game-one');
      const operator = await signInOperator(h, ALICE.oId);
      const added = await consolePost(h, operator, '/console/api/webhooks', { appId: 'game-one', url: receiver.url, events: ['client.signed_in'] });
      assert.is(added.status, 200, added.text);
      assert.match(added.body.secret, /^whsec_/);
      const id: string = added.body.endpoint.id;
      const page = await consoleGet(h, operator, '/console/api/webhooks');
      assert.equal(page.body.apps, [{ appId: 'game-one', app: 'game-one' }]);
      assert.equal(
        page.body.endpoints.map((e: { id: string; status: string }) => [e.id, e.status]),
        [[id, 'enabled']],
      );
      assert.not.ok(page.text.includes(added.body.secret), 'the secret is shown once');

      receiver.script({ status: 500, body: 'not yet' });
      await signIn(h, client.clientId, BOB.oId);
      const eventId = (await eventually(() => receiver.arrivals[0], 'the sign-in at the receiver')).event.id;
      const detail = await eventually(async () => {
        const res = await consoleGet(h, operator, `/console/api/webhooks/${id}`);
        return res.body.attempts.length === 2 && res.body.attempts[0].result === 'delivered' && res.body;
      }, 'the failed attempt and the delivered one');
      assert.equal(
        detail.attempts.map((a: { attempt: number; result: string; status: number }) => [a.attempt, a.result, a.status]),
        [
          [2, 'delivered', 200],
          [1, 'failed', 500],
        ],
      );
      assert.is(detail.attempts[1].response, 'not yet');

      const resent = await consolePost(h, operator, `/console/api/webhooks/${id}/events/${eventId}/resend`);
      assert.is(resent.status, 200, resent.text);
      await eventually(() => receiver.of(eventId).length === 3, 'the event sent again');

      for (const [action, check] of [
        ['disable', (b: { endpoint: { status: string } }) => b.endpoint.status === 'disabled'],
        ['enable', (b: { endpoint: { status: string } }) => b.endpoint.status === 'enabled'],
        ['rotate', (b: { secret?: string }) => /^whsec_/.test(b.secret ?? '')],
        ['delete', (b: { deleted?: boolean }) => b.deleted === true],
      ] as const) {
        const res = await consolePost(h, operator, `/console/api/webhooks/${id}/${action}`);
        assert.is(res.status, 200, `${action}: ${res.text}`);
        assert.ok(check(res.body), `${action}: ${res.text}`);
      }
      assert.is((await consoleGet(h, operator, `/console/api/webhooks/${id}`)).status, 404);
      const changes = (await h.events(`webhook-${id}`)).map((e) => [e.type, (e.data as { by?: unknown }).by]);
      assert.equal(changes, [
        ['WebhookRegistered', BY],
        ['WebhookDisabled', BY],
        ['WebhookEnabled', BY],
        ['WebhookSecretRotated', BY],
        ['WebhookDeleted', BY],
      ]);
      const resend = (await h.events('webhookdelivery-')).find((e) => e.type === 'WebhookResendRequested');
      assert.equal((resend?.data as { by?: unknown } | undefined)?.by, BY);
    } finally {
      client.stream.close();
      await receiver.close();
    }
  }));

test('bad webhook input in the console is a 400 naming the field, and records nothing', () =>
  withHarness(ON, async (h) => {
    await h.key(['vip:read'], 'game-one');
    const operator = await signInOperator(h, ALICE.oId);
    const cases: Array<[unknown, string]> = [
      [{ url: 'https://game.example/hook', events: ['client.signed_in'] }, 'appId'],
      [{ appId: 'nobody', url: 'https://game.example/hook', events: ['client.signed_in'] }, 'appId'],
      [{ appId: 'game-one', url: 'http://game.example/hook', events: ['client.signed_in'] }, 'url'],
      [{ appId: 'game-one', url: 'https://game.example/hook', events: [] }, 'events'],
    ];
    for (const [body, field] of cases) {
      const res = await consolePost(h, operator, '/console/api/webhooks', body);
      assert.is(res.status, 400, res.text);
      assert.is(res.body.data.issues[0].field, field, res.text);
    }
    assert.is((await consolePost(h, operator, '/console/api/webhooks/abcdefghijklmno/frobnicate')).status, 400);
    assert.is((await consolePost(h, operator, '/console/api/webhooks/abcdefghijklmno/disable')).status, 404);
    assert.equal(await h.events('webhook-'), []);
  }));

test.run();
