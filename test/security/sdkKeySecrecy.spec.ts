// Attack: getting the SDK to write its apiKey where logs keep it. A key read with its line break
// (or carrying CR/LF/NUL on purpose) used to end up in fetch's error message, quoted, and be sent
// again as if the network had failed; a hostile or broken answer could echo the key into the
// error the SDK builds from it. The key must be checked when the client is made (the form
// `keys create` issues, no control characters) without being repeated, and no failure of any kind
// may carry it in its message, stack, cause or fields.
import { inspect } from 'node:util';
import { BridgeError, createAdminClient, type Fetch } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countingFetch, json, startScriptedServer, wellFormedKey, type Responder } from '../sdk/scriptedServer.js';
import { rejects } from '../support/rejects.js';

const OID = '1630399136785';

/** Everything an error could show: message, stack, every field, and the same along its causes. */
function everythingSaidBy(error: unknown): string {
  const parts: string[] = [inspect(error, { depth: 20, showHidden: true, breakLength: Infinity })];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 20; depth++, current = current.cause) {
    parts.push(current.message, current.stack ?? '', JSON.stringify(current) ?? '');
  }
  return parts.join('\n');
}

function assertKeyNotIn(error: unknown, key: string, what: string): void {
  const said = everythingSaidBy(error).toLowerCase();
  assert.not.ok(said.includes(key.toLowerCase()), `${what}: the error shows the key`);
  assert.not.ok(said.includes(key.slice(4).toLowerCase()), `${what}: the error shows the key’s random part`);
}

const malformed = (good: string): Array<[string, unknown]> => [
  ['CRLF and a header inside', `${good}\r\nX-Injected: 1`],
  ['a NUL', `${good.slice(0, 10)}\0${good.slice(10)}`],
  ['a trailing LF', `${good}\n`],
  ['a trailing CRLF', `${good}\r\n`],
  ['a tab', `${good}\t`],
  ['a leading space', ` ${good}`],
  ['a character short', good.slice(0, -1)],
  ['a character long', `${good}A`],
  ['another prefix', `cbx_${good.slice(4)}`],
  ['base64 instead of base64url', `${good.slice(0, -1)}+`],
  ['a non-ASCII letter', `${good.slice(0, -1)}é`],
  ['empty', ''],
  ['missing', undefined],
  ['null', null],
  ['a number', 42],
];

test('a key with CR, LF, NUL or anything but the issued form is refused when the client is made, unrepeated, and nothing is sent', async () => {
  const service = await startScriptedServer();
  try {
    for (const [what, apiKey] of malformed(wellFormedKey())) {
      const counted = countingFetch();
      const refusal = await rejects(
        () => createAdminClient({ baseUrl: service.url, apiKey: apiKey as string, fetch: counted.fetch }),
        TypeError,
        `making a client with a key that is ${what}`,
      );
      assert.is(counted.calls(), 0, `${what}: fetch was called ${counted.calls()} times`);
      assert.match(refusal.message, /^apiKey: /);
      if (typeof apiKey === 'string' && apiKey.length > 8) assertKeyNotIn(refusal, apiKey.trim(), what);
    }
    assert.is(service.received.length, 0);
  } finally {
    await service.close();
  }
});

test('the refusal says what is wrong with the key without showing it', async () => {
  const good = wellFormedKey();
  const messageFor = async (apiKey: unknown) =>
    (await rejects(() => createAdminClient({ baseUrl: 'http://127.0.0.1:1', apiKey: apiKey as string }), TypeError, 'making the client')).message;
  assert.match(await messageFor(`${good}\n`), /ends with a line break/);
  assert.match(await messageFor(`${good.slice(0, 9)}\0${good.slice(10)}`), /control characters/);
  assert.match(await messageFor(good.slice(0, -2)), /29 characters instead of 31/);
  assert.match(await messageFor(undefined), /missing/);
  // The key's own form is accepted.
  createAdminClient({ baseUrl: 'http://127.0.0.1:1', apiKey: good });
});

/** A service that answers every request as told. */
async function failureFrom(respond: Responder, key: string, options: { timeoutMs?: number; method?: 'GET' | 'POST' } = {}) {
  const service = await startScriptedServer(respond);
  try {
    const admin = createAdminClient({ baseUrl: service.url, apiKey: key, maxAttempts: 2, ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }) });
    return await rejects(options.method === 'POST' ? admin.points.edit({ oId: OID, point: 1, memo: 'm' }) : admin.vip.get(OID));
  } finally {
    await service.close();
  }
}

test('no failure of any kind shows the key: refused, timed out, 401, 403, 5xx, not JSON, redirected, a fetch that quotes it', async () => {
  const key = wellFormedKey();
  const failures: Array<[string, () => Promise<unknown>]> = [
    [
      'connection refused',
      async () => {
        const closed = await startScriptedServer();
        await closed.close();
        return rejects(createAdminClient({ baseUrl: closed.url, apiKey: key, maxAttempts: 2 }).vip.get(OID));
      },
    ],
    ['no answer in time', () => failureFrom(() => undefined, key, { timeoutMs: 200 })],
    // Hostile answers echo the key, in any case, in the message, the data and its field names.
    ['401 echoing the key', () => failureFrom((_q, res) => json(res, 401, { code: 401, message: `Invalid apiKey ${key}`, data: { apiKey: key, [key]: true } }), key)],
    ['401 echoing it as X-Request-Id', () => failureFrom((_q, res) => json(res, 401, { code: 401, message: 'Invalid apiKey', data: {} }, { 'X-Request-Id': key }), key)],
    [
      '403 echoing it upper-cased',
      () => failureFrom((_q, res) => json(res, 403, { code: 403, message: `No permission: ${key.toUpperCase()}`, data: {} }), key, { method: 'POST' }),
    ],
    ['403 echoing it JSON-escaped', () => failureFrom((_q, res) => res.writeHead(403).end(`{"message":"${key.replace('c', '\\u0063')}"}`), key)],
    ['500 not JSON', () => failureFrom((_q, res) => res.writeHead(500, { 'Content-Type': 'text/html' }).end(`<h1>error for ${key}</h1>`), key)],
    [
      '502, retried, echoing it',
      () => failureFrom((_q, res) => json(res, 502, { code: 502, message: `Outcome unknown: ${key}`, data: { operationId: key } }), key, { method: 'POST' }),
    ],
    ['200 not JSON', () => failureFrom((_q, res) => res.writeHead(200).end(`not json ${key}`), key)],
    [
      'a redirect to a host named after it',
      () => failureFrom((_q, res) => res.writeHead(307, { Location: `http://${key}.example.test/${key}?k=${key}` }).end(), key, { method: 'POST' }),
    ],
    [
      'a fetch whose error quotes it',
      () => {
        const quoting: Fetch = async (_url, init) => {
          throw new TypeError('fetch failed', { cause: new Error(`refused header apiKey: ${init.headers.apiKey}`) });
        };
        return rejects(createAdminClient({ baseUrl: 'http://127.0.0.1:1', apiKey: key, fetch: quoting, maxAttempts: 1 }).vip.get(OID));
      },
    ],
    [
      'a fetch whose error carries the headers',
      () => {
        const carrying: Fetch = async (_url, init) => {
          throw Object.assign(new Error('proxy refused'), { request: { headers: { ...init.headers } } });
        };
        return rejects(createAdminClient({ baseUrl: 'http://127.0.0.1:1', apiKey: key, fetch: carrying, maxAttempts: 1 }).vip.get(OID));
      },
    ],
  ];
  for (const [what, fail] of failures) {
    const error = await fail();
    assert.instance(error, BridgeError, what);
    assertKeyNotIn(error, key, what);
  }
});

test('a failure that does not mention the key keeps its cause and description', async () => {
  const closed = await startScriptedServer();
  await closed.close();
  const error = await rejects(createAdminClient({ baseUrl: closed.url, apiKey: wellFormedKey(), maxAttempts: 1 }).vip.get(OID), BridgeError);
  assert.match(error.message, /^Network error: fetch failed \(connect ECONNREFUSED /);
  assert.instance(error.cause, TypeError);
});

test.run();
