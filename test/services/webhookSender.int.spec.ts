// One webhook attempt against a real receiver on loopback (src/services/webhookSender.ts): a name
// that resolves to loopback is refused at connection time unless allowed (the receiver gets
// nothing), an address in the URL is refused before any connection, a receiver that never answers
// is given up on at the timeout, and only the first 1 KiB of an answer is kept.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESPONSE_KEPT, WebhookSender } from '../../src/services/webhookSender.js';
import { startWebhookReceiver } from '../support/webhookReceiver.js';

const BODY = '{"id":"evt_1","type":"client.signed_in","created":"2027-01-01T00:00:00.000Z","app":"game-one","data":{}}';
const sender = (allowPrivate: boolean, timeoutMs = 5000) => new WebhookSender({ timeoutMs, allowPrivate, userAgent: 'community-bridge-tests' });
const never = new AbortController().signal;

test('a name resolving to loopback, or a loopback address in the URL, is refused unless allowed; nothing reaches the receiver', async () => {
  const receiver = await startWebhookReceiver();
  const strict = sender(false);
  const open = sender(true);
  try {
    const port = new URL(receiver.url).port;
    const byName = await strict.send(`http://localhost:${port}/hook`, {}, BODY, never);
    assert.is(byName.delivered, false);
    assert.match(byName.error!, /^not sent: localhost resolves to (127\.0\.0\.1|::1), a loopback address: refused/);
    const byAddress = await strict.send(`${receiver.url}/hook`, {}, BODY, never);
    assert.match(byAddress.error!, /^not sent: the host must not be a loopback address/);
    assert.is(receiver.arrivals.length, 0);

    const allowed = await open.send(`${receiver.url}/hook`, { 'Bridge-Event-Id': 'evt_1' }, BODY, never);
    assert.equal([allowed.delivered, allowed.status, allowed.response], [true, 200, 'ok']);
    assert.is(receiver.arrivals.length, 1, 'the witness: allowed, it arrives');
    assert.is(receiver.arrivals[0]!.raw, BODY);
    assert.is(receiver.arrivals[0]!.headers['bridge-event-id'], 'evt_1');
  } finally {
    await Promise.all([strict.close(), open.close(), receiver.close()]);
  }
});

test('a receiver that never answers is given up on at the timeout; a long answer is kept to 1 KiB', async () => {
  const receiver = await startWebhookReceiver();
  const quick = sender(true, 300);
  try {
    receiver.script({ hold: true }, { status: 400, body: 'é'.repeat(2000) });
    const held = await quick.send(receiver.url, {}, BODY, never);
    assert.equal([held.delivered, held.status, held.error], [false, undefined, 'timed out after 300 ms']);
    const long = await quick.send(receiver.url, {}, BODY, never);
    assert.equal([long.delivered, long.status], [false, 400]);
    assert.is(long.response, 'é'.repeat(RESPONSE_KEPT / 2), 'its first 1 KiB (2-byte characters)');
  } finally {
    receiver.release();
    await Promise.all([quick.close(), receiver.close()]);
  }
});

test.run();
