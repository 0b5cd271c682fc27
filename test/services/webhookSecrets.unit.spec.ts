// What keeps webhooks trustworthy without a network: endpoint secrets sealed so that only the same
// session secret and the same endpoint open them, the signature header as receivers check it, and
// which addresses webhooks may not reach.
import { createHmac } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AddressRefusedError, guardedLookup, refusedHostProblem, refusedRange } from '../../src/services/webhookAddresses.js';
import { newWebhookSecret, signatureHeader } from '../../src/services/webhookSignature.js';
import { SecretBox } from '../../src/system/sealed.js';

const ROOT = Buffer.from('a session secret of at least thirty-two characters');

test('a sealed secret opens with the same root secret and owner only, and does not show in the sealed form', () => {
  const box = new SecretBox(ROOT, 'webhook-endpoint-secrets');
  const secret = newWebhookSecret();
  const sealed = box.seal(secret, 'endpoint-a');
  assert.not.ok(sealed.includes(secret.slice(6)));
  assert.is.not(box.seal(secret, 'endpoint-a'), sealed, 'a fresh nonce each time');
  assert.is(box.open(sealed, 'endpoint-a'), secret);
  assert.is(box.open(sealed, 'endpoint-b'), undefined, 'moved to another endpoint: does not open');
  assert.is(new SecretBox(Buffer.from('another session secret, also long enough'), 'webhook-endpoint-secrets').open(sealed, 'endpoint-a'), undefined);
  assert.is(new SecretBox(ROOT, 'another purpose').open(sealed, 'endpoint-a'), undefined);
  const [version, iv, body] = sealed.split('.');
  const flipped = Buffer.from(body!, 'base64url');
  flipped[0]! ^= 1;
  assert.is(box.open(`${version}.${iv}.${flipped.toString('base64url')}`, 'endpoint-a'), undefined, 'tampered: does not open');
  assert.is(box.open('garbage', 'endpoint-a'), undefined);
});

test('the signature header: t, then one v1 per secret, each an HMAC-SHA256 of "<t>.<body>" keyed by the whole secret', () => {
  const body = '{"id":"evt_1","type":"client.signed_in"}';
  const [fresh, old] = [newWebhookSecret(), newWebhookSecret()];
  const hmac = (secret: string) => createHmac('sha256', Buffer.from(secret, 'utf8')).update(`1700000000.${body}`, 'utf8').digest('hex');
  assert.is(signatureHeader([fresh], 1700000000, body), `t=1700000000,v1=${hmac(fresh)}`);
  assert.is(signatureHeader([fresh, old], 1700000000, body), `t=1700000000,v1=${hmac(fresh)},v1=${hmac(old)}`);
  assert.match(fresh, /^whsec_[A-Za-z0-9_-]{43}$/);
});

test('refused ranges: loopback, private, link-local and special-use, IPv4-mapped included; public addresses pass', () => {
  const cases: Array<[string, string | undefined]> = [
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd00::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'special-use'],
    ['255.255.255.255', 'special-use'],
    ['93.184.216.34', undefined],
    ['172.32.0.1', undefined],
    ['2606:4700::1111', undefined],
  ];
  for (const [address, kind] of cases) assert.is(refusedRange(address), kind, address);
  assert.match(refusedHostProblem('localhost')!, /loopback/);
  assert.match(refusedHostProblem('[::1]')!, /loopback/);
  assert.is(refusedHostProblem('game.example'), undefined, 'a name is checked when it is resolved');
});

test('a name that resolves to a refused address fails the connection before anything is sent', async () => {
  const error = await new Promise<unknown>((resolve) => guardedLookup('localhost', {}, (err) => resolve(err)));
  assert.instance(error, AddressRefusedError);
  assert.match((error as Error).message, /^localhost resolves to (127\.0\.0\.1|::1), a loopback address: refused/);
  const all = await new Promise<unknown>((resolve) => guardedLookup('localhost', { all: true }, (err) => resolve(err)));
  assert.instance(all, AddressRefusedError);
});

test.run();
