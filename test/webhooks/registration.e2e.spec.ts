// Registering webhook endpoints (docs/api.md, "Webhooks"): what a URL may be, with private
// addresses refused unless the operator allows them; the bounds per app; the secret shown once,
// also to a retry with the same Idempotency-Key; and an endpoint that fails for its whole retry
// period is disabled with the reason shown.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, withHarness } from '../support/harness.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { startWebhookReceiver } from '../support/webhookReceiver.js';

const EVENTS = ['client.signed_in'];

test('a URL must be https (http only to loopback), public unless WEBHOOKS_ALLOW_PRIVATE, without credentials; each refusal names the field', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key(['webhooks:manage'], 'game-one');
    const refused: Array<[unknown, string, RegExp]> = [
      [{ url: 'http://game.example/hook', events: EVENTS }, 'url', /must be https \(http only to a loopback address/],
      [{ url: 'ftp://game.example/hook', events: EVENTS }, 'url', /must be an https URL/],
      [{ url: 'not a url', events: EVENTS }, 'url', /must be an absolute https URL/],
      [{ url: 'https://user:pw@game.example/hook', events: EVENTS }, 'url', /must not carry a user name or password/],
      [{ url: 'https://game.example/hook#x', events: EVENTS }, 'url', /must not have a fragment/],
      [{ url: `https://game.example/${'a'.repeat(2100)}`, events: EVENTS }, 'url', /at most 2048 characters/],
      [{ url: 'http://127.0.0.1:9/hook', events: EVENTS }, 'url', /must not be a loopback address \(WEBHOOKS_ALLOW_PRIVATE=true allows it\)/],
      [{ url: 'https://localhost/hook', events: EVENTS }, 'url', /must not be a loopback address/],
      [{ url: 'https://[::1]/hook', events: EVENTS }, 'url', /must not be a loopback address/],
      [{ url: 'https://10.1.2.3/hook', events: EVENTS }, 'url', /must not be a private address/],
      [{ url: 'https://192.168.0.10/hook', events: EVENTS }, 'url', /must not be a private address/],
      [{ url: 'https://169.254.169.254/latest/meta-data', events: EVENTS }, 'url', /must not be a link-local address/],
      [{ url: 'https://[fe80::1]/hook', events: EVENTS }, 'url', /must not be a link-local address/],
      [{ url: 'https://[::ffff:127.0.0.1]/hook', events: EVENTS }, 'url', /must not be a loopback address/],
      [{ url: 'https://game.example/hook', events: [] }, 'events', /at least one event type/],
      [{ url: 'https://game.example/hook', events: ['user.deleted'] }, 'events.0', /must be one of client\.signed_in, /],
      [{ url: 'https://game.example/hook', events: EVENTS, description: 'd'.repeat(201) }, 'description', /at most 200 characters/],
      [{ url: 'https://game.example/hook', events: EVENTS, appId: 'no-such-app' }, 'appId', /a key registers endpoints of its own app only/],
    ];
    for (const [body, field, message] of refused) {
      const res = await h.post('/adm/webhooks', body, key);
      assert.is(res.status, 400, `${JSON.stringify(body).slice(0, 120)}: ${res.text}`);
      assert.is(res.body.data.issues[0].field, field, res.text);
      assert.match(res.body.data.issues[0].message, message);
    }
    assert.equal((await h.get('/adm/webhooks', key)).body.data.items, [], 'nothing was registered');
    const ok = await h.post('/adm/webhooks', { url: 'https://game.example/hook', events: EVENTS }, key);
    assert.is(ok.status, 200, ok.text);
  }));

test('at most WEBHOOKS_MAX_PER_APP endpoints per app; a retry with the same Idempotency-Key answers the same endpoint without its secret', () =>
  withHarness({ WEBHOOKS_MAX_PER_APP: '2' }, async (h) => {
    const { key } = await h.key(['webhooks:manage'], 'game-one');
    const headers = { 'Idempotency-Key': 'register-once' };
    const body = { url: 'https://game.example/one', events: EVENTS };
    const first = await h.request('POST', '/adm/webhooks', { body, apiKey: key, headers });
    assert.is(first.status, 200, first.text);
    assert.match(first.body.data.secret, /^whsec_/);
    const retry = await h.request('POST', '/adm/webhooks', { body, apiKey: key, headers });
    assert.is(retry.status, 200, retry.text);
    assert.is(retry.headers.get('idempotent-replayed'), 'true');
    assert.is(retry.body.data.endpoint.id, first.body.data.endpoint.id);
    assert.is(retry.body.data.secret, undefined, 'the secret is not kept with the answer');
    const stored = (await h.events('idempotency-')).map((e) => JSON.stringify(e.data)).join('\n');
    assert.not.ok(stored.includes(first.body.data.secret), 'nor anywhere in the log');
    assert.not.ok(
      (await h.events('webhook-')).some((e) => JSON.stringify(e.data).includes(first.body.data.secret)),
      'the endpoint keeps it sealed',
    );

    assert.is((await h.post('/adm/webhooks', { url: 'https://game.example/two', events: EVENTS }, key)).status, 200);
    const third = await h.post('/adm/webhooks', { url: 'https://game.example/three', events: EVENTS }, key);
    assert.is(third.status, 409, third.text);
    assert.match(third.body.message, /has 2 webhook endpoints already \(WEBHOOKS_MAX_PER_APP\)/);
    const otherApp = (await h.key(['webhooks:manage'], 'game-two')).key;
    assert.is((await h.post('/adm/webhooks', { url: 'https://game.example/three', events: EVENTS }, otherApp)).status, 200, 'the bound is per app');
  }));

test('an endpoint that fails for its whole retry period is disabled, and says why', () =>
  withHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_FIRST_MS: '40', WEBHOOKS_RETRY_HOURS: '0.0005' }, async (h) => {
    const receiver = await startWebhookReceiver();
    receiver.otherwise({ status: 500, body: 'broken' });
    const client = await connect(h);
    try {
      const { key } = await h.key(['webhooks:manage'], 'game-one');
      const registered = await h.post('/adm/webhooks', { url: receiver.url, events: EVENTS }, key);
      const id = registered.body.data.endpoint.id;
      await signIn(h, client.clientId, ALICE.oId);
      const shown = await eventually(
        async () => {
          const res = await h.get(`/adm/webhooks/${id}`, key);
          return res.body.data.status === 'disabled' && res.body.data;
        },
        { what: 'the endpoint disabled', timeoutMs: 20_000 },
      );
      assert.is(shown.disabled.reason, 'failing');
      assert.match(shown.disabled.detail, /^every attempt failed since .* \(the last: HTTP 500\)$/);
      assert.is(shown.lastFailed.why, 'HTTP 500');
      assert.ok(receiver.arrivals.length >= 2, 'it was retried before');
      const attempts = (await h.get(`/adm/webhooks/${id}/attempts`, key)).body.data.items;
      assert.is(attempts[0].result, 'failed');
      assert.is(attempts[0].retryAt, undefined, 'the last attempt was the last: given up');
      assert.is(shown.pending, 0);
      const disabledEvent = (await h.events(`webhook-${id}`)).find((e) => e.type === 'WebhookDisabled');
      assert.equal((disabledEvent?.data as { reason: string } | undefined)?.reason, 'failing');
    } finally {
      client.stream.close();
      await receiver.close();
    }
  }));

test.run();
