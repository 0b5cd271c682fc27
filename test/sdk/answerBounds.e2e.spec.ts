// Attack on the SDK's user: something at `baseUrl` answers with a body of 900 MB, or drips one
// byte at a time for ever. The admin client reads at most `maxAnswerBytes` (4 MiB by default) and
// then stops (AnswerTooLargeError, not retried), and its deadline covers the body as well as the
// head (ConnectionError `timeout`), so neither memory nor time follows the server's choice.
import { AnswerTooLargeError, ConnectionError, createAdminClient } from '@community-bridge/sdk';
import type { ServerResponse } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from '../support/rejects.js';
import { startScriptedServer, wellFormedKey } from './scriptedServer.js';

const MiB = 1024 * 1024;
const HUGE = 900 * MiB;

/** Writes `total` bytes of a JSON-looking body as fast as the reader takes them; resolves with what it wrote when the socket closes. */
function stream(res: ServerResponse, total: number, headers: Record<string, string>): Promise<number> {
  const chunk = Buffer.alloc(MiB, 'a');
  let written = 0;
  res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
  res.write('{"code":0,"msg":"');
  const more = () => {
    while (written < total && !res.destroyed) {
      written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    if (!res.destroyed) res.end('"}');
  };
  more();
  return new Promise((resolve) => res.on('close', () => resolve(written)));
}

/** Rejects a call that is still running after `ms`: a bound that does not hold must fail the test, not hang it. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

for (const [title, headers] of [
  ['streamed without a length', {}],
  ['with its Content-Length', { 'Content-Length': String(HUGE + 20) }],
] as const) {
  test(`a 900 MB answer ${title}: AnswerTooLargeError after at most a few MiB were sent, one attempt`, async () => {
    let sent: Promise<number> | undefined;
    const server = await startScriptedServer((_req, res) => {
      sent = stream(res, HUGE, headers);
    });
    try {
      const client = createAdminClient({ baseUrl: server.url, apiKey: wellFormedKey() });
      const error = await rejects(within(client.vip.get('1630399136785'), 20_000), AnswerTooLargeError);
      assert.equal([error.reason, error.status, error.maxAnswerBytes], ['answer_too_large', 200, 4 * MiB]);
      assert.match(error.message, /larger than maxAnswerBytes \(4194304\)/);
      const written = await sent!;
      assert.ok(written < 32 * MiB, `the client stopped reading: the server got ${written / MiB} MiB out of 900`);
      assert.is(server.received.length, 1, 'not retried: the same answer would come again');
    } finally {
      await server.close();
    }
  });
}

test('maxAnswerBytes is the bound: 2 MiB passes by default and fails under a 1 MiB bound', async () => {
  const server = await startScriptedServer((_req, res) => void stream(res, 2 * MiB, {}));
  try {
    const apiKey = wellFormedKey();
    const whole = await createAdminClient({ baseUrl: server.url, apiKey }).vip.get('1630399136785');
    assert.is((whole as unknown as { msg: string }).msg.length, 2 * MiB);
    const bounded = createAdminClient({ baseUrl: server.url, apiKey, maxAnswerBytes: MiB });
    await rejects(bounded.vip.get('1630399136785'), AnswerTooLargeError);
    assert.throws(() => createAdminClient({ baseUrl: server.url, apiKey, maxAnswerBytes: 10 }), /maxAnswerBytes: must be a whole number from 1024/);
  } finally {
    await server.close();
  }
});

test('an answer that drips one byte at a time: the deadline covers the body, a ConnectionError timeout', async () => {
  let dripping: NodeJS.Timeout | undefined;
  let closed: Promise<void> | undefined;
  const server = await startScriptedServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"code":0,"msg":"');
    dripping = setInterval(() => res.write('a'), 100);
    closed = new Promise((resolve) => res.on('close', () => resolve()));
  });
  try {
    const client = createAdminClient({ baseUrl: server.url, apiKey: wellFormedKey(), timeoutMs: 1500 });
    const error = await rejects(within(client.vip.get('1630399136785'), 10_000), ConnectionError);
    assert.is(error.reason, 'timeout');
    assert.match(error.message, /^No answer within 1500 ms/);
    await within(closed!, 5000);
    assert.is(server.received.length, 1);
  } finally {
    clearInterval(dripping);
    await server.close();
  }
});

test.run();
