// The admin client's options are checked when it is made: a baseUrl, timeoutMs or maxAttempts no
// call could work with throws a TypeError naming the option (and not repeating a URL, which may
// hold a password); a good baseUrl may carry a path, and its trailing slashes are ignored.
import { createAdminClient, type AdminClientOptions } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from '../support/rejects.js';
import { startScriptedServer, wellFormedKey } from './scriptedServer.js';

const refusal = async (options: Partial<AdminClientOptions>) =>
  (await rejects(() => createAdminClient({ baseUrl: 'http://127.0.0.1:1', apiKey: wellFormedKey(), ...options }), TypeError, `making a client with ${JSON.stringify(options)}`))
    .message;

test('a baseUrl that is not a plain http(s) address is refused, unrepeated', async () => {
  for (const baseUrl of [
    '',
    'bridge.example.com',
    'ftp://bridge.example.com',
    'https://user:s3cret@bridge.example.com',
    'https://bridge.example.com/?x=1',
    'https://bridge.example.com/#top',
  ]) {
    const message = await refusal({ baseUrl });
    assert.match(message, /^baseUrl: /);
    assert.not.ok(message.includes('s3cret'), message);
  }
});

test('timeoutMs and maxAttempts outside their bounds are refused', async () => {
  for (const timeoutMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])
    assert.match(await refusal({ timeoutMs }), /^timeoutMs: must be a whole number from 1 to 2147483647/);
  for (const maxAttempts of [0, 11, 2.5, Number.NaN]) assert.match(await refusal({ maxAttempts }), /^maxAttempts: must be a whole number from 1 to 10/);
});

test('a baseUrl with a path and trailing slashes: calls go under the path', async () => {
  const service = await startScriptedServer();
  try {
    await createAdminClient({ baseUrl: `${service.url}/bridge//`, apiKey: wellFormedKey(), timeoutMs: 2 ** 31 - 1, maxAttempts: 10 }).liveness.get('1630399136785');
    assert.equal(
      service.received.map((r) => r.url),
      ['/bridge/adm/liveness/1630399136785'],
    );
  } finally {
    await service.close();
  }
});

test.run();
