// Bad input (docs/decisions.md "Errors for what the spec does not
// show"): HTTP 400 `{"code":400,"message":"<field>: <problem>","data":{"issues":[…]}}`, 413 for a
// body over 1 MiB, a JSON 404 for unknown routes, the error form for a wrong method, and never a
// stack trace in any answer.
import { gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness, type Answer, type Harness } from '../support/harness.js';

const validation = suite<{ h: Harness; key: string; answers: Answer[] }>('input validation and error answers');

validation.before(async (context) => {
  context.answers = [];
  context.h = await startHarness();
  context.key = (await context.h.key(['*'])).key;
});

validation.after(async ({ h }) => {
  await h?.close();
});

const ATTR = 'url=https://example.test/medal.png&backcolor=ffffff&fontcolor=000000';

/** Sends a request with the test key and keeps the answer for the no-stack-trace check. */
async function send(
  context: { h: Harness; key: string; answers: Answer[] },
  method: string,
  path: string,
  init: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await context.h.request(method, path, { apiKey: context.key, ...init });
  context.answers.push(res);
  return res;
}

/** A 400 in the error form whose message is `<field>: <problem>` and whose issues list it. */
function assertInvalid(res: Answer, field: string, problem: string | RegExp) {
  assert.is(res.status, 400, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(Object.keys(res.body).sort(), ['code', 'data', 'message']);
  assert.is(res.body.code, 400);
  const [gotField, ...rest] = (res.body.message as string).split(': ');
  assert.is(gotField, field, res.body.message);
  if (typeof problem === 'string') assert.is(rest.join(': '), problem, res.body.message);
  else assert.match(rest.join(': '), problem);
  assert.ok(Array.isArray(res.body.data.issues), `data.issues in ${res.text}`);
  assert.ok(
    res.body.data.issues.some((i: { field: string; message: string }) => i.field === field && `${field}: ${i.message}` === res.body.message),
    `the issues list the first problem: ${res.text}`,
  );
}

validation('a missing field: "oId: is required"', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { point: 1, memo: 'm' } }), 'oId', 'is required');
  assertInvalid(await send(c, 'POST', '/adm/items/edit', { body: { oId: ALICE.oId, item: 'x' } }), 'sum', 'is required');
  assertInvalid(await send(c, 'POST', '/adm/vip/submit', { body: { oId: ALICE.oId, quality: 'vip' } }), 'expired', 'is required');
});

validation('data.issues lists every problem, the message names the first', async (c) => {
  const res = await send(c, 'POST', '/adm/points/edit', { body: {} });
  assertInvalid(res, 'oId', 'is required');
  assert.equal(res.body.data.issues, [
    { field: 'oId', message: 'is required' },
    { field: 'point', message: 'is required' },
    { field: 'memo', message: 'is required' },
  ]);
});

validation('a wrong type names the field and the type it must be', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: 1630399136785, point: 1, memo: 'm' } }), 'oId', 'must be a string');
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: '10', memo: 'm' } }), 'point', 'must be a number');
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 1, memo: 5 } }), 'memo', 'must be a string');
  assertInvalid(await send(c, 'POST', '/adm/vip/batch-submit', { body: { oId: ALICE.oId, vips: 'vip' } }), 'vips', 'must be an array');
  assertInvalid(await send(c, 'POST', '/adm/message/push', { body: { oIds: [1], name: 'n', data: {} } }), 'oIds.0', 'must be a string');
});

validation('a fraction where an integer belongs: "point: must be an integer"', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 1.5, memo: 'm' } }), 'point', 'must be an integer');
  assertInvalid(await send(c, 'POST', '/adm/items/edit', { body: { oId: ALICE.oId, item: 'x', sum: -0.25 } }), 'sum', 'must be an integer');
});

validation('zero points and a zero item change are refused; so are numbers beyond 32 bits', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 0, memo: 'm' } }), 'point', 'must not be 0');
  assertInvalid(await send(c, 'POST', '/adm/items/edit', { body: { oId: ALICE.oId, item: 'x', sum: 0 } }), 'sum', 'must not be 0');
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 2 ** 31, memo: 'm' } }), 'point', 'must fit in a 32-bit integer');
});

validation('empty or blank strings are refused', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: '  ', point: 1, memo: 'm' } }), 'oId', 'must not be empty');
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 1, memo: '' } }), 'memo', 'must not be empty');
  assertInvalid(await send(c, 'GET', '/adm/liveness/%20'), 'oId', 'must not be empty');
});

validation('malformed JSON: "body: malformed JSON"', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { raw: '{"oId": "1", point: 1}' }), 'body', 'malformed JSON');
  assertInvalid(await send(c, 'POST', '/adm/vip/submit', { raw: '{"oId":' }), 'body', 'malformed JSON');
});

validation('a body that is not JSON (by its content type) is refused', async (c) => {
  const form = await send(c, 'POST', '/adm/points/edit', { raw: 'oId=1&point=1&memo=m', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assertInvalid(form, 'body', /Content-Type must be application\/json/);
  const text = await send(c, 'POST', '/adm/points/edit', { raw: JSON.stringify({ oId: ALICE.oId, point: 1, memo: 'm' }), headers: { 'content-type': 'text/plain' } });
  assertInvalid(text, 'body', /Content-Type must be application\/json/);
  assert.is(c.h.sim.user(ALICE.oId)!.points, 100, 'nothing reached the platform');
});

validation('a body is read alike whichever way it comes: plain, with a charset and a byte order mark, compressed, chunked', async (c) => {
  const body = JSON.stringify({ oId: ALICE.oId, point: 1, memo: 'x'.repeat(300) });
  const expectMemoTooLong = (res: Answer) => assertInvalid(res, 'memo', 'must be at most 255 characters');
  expectMemoTooLong(await send(c, 'POST', '/adm/points/edit', { raw: body }));
  expectMemoTooLong(await send(c, 'POST', '/adm/points/edit', { raw: `\ufeff${body}`, headers: { 'content-type': 'application/json; charset=UTF-8' } }));
  const post = async (payload: Uint8Array | ReadableStream, headers: Record<string, string>) => {
    const res = await fetch(`${c.h.url}/adm/points/edit`, {
      method: 'POST',
      headers: { apiKey: c.key, 'content-type': 'application/json', ...headers },
      body: payload,
      duplex: 'half',
    } as RequestInit);
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text), headers: res.headers } as Answer;
  };
  expectMemoTooLong(await post(gzipSync(body), { 'content-encoding': 'gzip' }));
  const chunked = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
      controller.enqueue(new TextEncoder().encode(body.slice(10)));
      controller.close();
    },
  });
  expectMemoTooLong(await post(chunked, {}));
  // A `__proto__` key is refused as koa-body refuses it, on either path.
  const poisoned = '{"oId":"1","point":1,"memo":"m","__proto__":{"polluted":true}}';
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { raw: poisoned }), 'body', 'malformed JSON');
  assertInvalid(await post(gzipSync(poisoned), { 'content-encoding': 'gzip' }), 'body', 'malformed JSON');
  // Empty: the object with nothing in it, which the schema then refuses for its first field.
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { raw: '' }), 'oId', 'is required');
  assert.is(c.h.sim.user(ALICE.oId)!.points, 100, 'nothing reached the platform');
});

validation('a JSON array, string or null body is not the object the endpoint takes', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/points/edit', { raw: JSON.stringify([{ oId: ALICE.oId, point: 1, memo: 'm' }]) }), 'body', 'must be a JSON object');
  assertInvalid(await send(c, 'POST', '/adm/items/query', { raw: '[]' }), 'body', 'must be a JSON object');
  for (const raw of ['"text"', 'null', '42']) {
    const res = await send(c, 'POST', '/adm/items/query', { raw });
    assert.is(res.status, 400, `${raw}: ${res.text}`);
    assert.match(res.body.message, /^body: /);
  }
});

validation('a medal attr not formatted url=…&backcolor=…&fontcolor=… is refused', async (c) => {
  const give = (attr: unknown) => send(c, 'POST', '/adm/medal/give', { body: { oId: ALICE.oId, name: 'n', description: 'd', attr } });
  for (const attr of ['red', 'url=https://x.test/i.png', 'url=https://x.test/i.png&backcolor=zzzzzz&fontcolor=000000', 'backcolor=ffffff&fontcolor=000000&url=x']) {
    assertInvalid(await give(attr), 'attr', /^must be formatted url=<http\(s\) icon url>&backcolor=<hex_color>&fontcolor=<hex_color>$/);
  }
  assertInvalid(await give(7), 'attr', 'must be a string');
  assertInvalid(await send(c, 'POST', '/adm/medal/give', { body: { oId: ALICE.oId, name: 'n', description: 'd', attr: ATTR, data: 1 } }), 'data', 'must be a string');
  assert.equal(c.h.sim.user(ALICE.oId)!.medals, []);
});

validation('message push without oIds or userIds is refused, naming oIds', async (c) => {
  assertInvalid(await send(c, 'POST', '/adm/message/push', { body: { name: 'n', data: {} } }), 'oIds', /^at least one of oIds and userIds must be given$/);
  assertInvalid(await send(c, 'POST', '/adm/message/push', { body: { oIds: [], userIds: [], name: 'n', data: {} } }), 'oIds', /at least one of oIds and userIds/);
});

validation('message push data must be a JSON object: not a string, an array or null', async (c) => {
  for (const data of ['text', [], [1, 2], null, 3]) {
    assertInvalid(await send(c, 'POST', '/adm/message/push', { body: { oIds: [ALICE.oId], name: 'n', data } }), 'data', 'must be a JSON object');
  }
  assertInvalid(await send(c, 'POST', '/adm/message/push', { body: { oIds: [ALICE.oId], data: {} } }), 'name', 'is required');
  assertInvalid(await send(c, 'POST', '/adm/message/push', { body: { oIds: [ALICE.oId], name: '', data: {} } }), 'name', 'must not be empty');
  assert.is((await c.h.events('message-')).length, 0, 'nothing was pushed');
});

validation('a body over 1 MiB is 413 in the error form; just under is read and validated', async (c) => {
  const over = await send(c, 'POST', '/adm/points/edit', { raw: JSON.stringify({ oId: ALICE.oId, point: 1, memo: 'x'.repeat(1024 * 1024) }) });
  assert.is(over.status, 413, over.text);
  assert.equal(over.body, { code: 413, message: over.body.message, data: { reason: 'payload_too_large' } });
  assert.match(over.body.message, /1 MiB/);
  const under = await send(c, 'POST', '/adm/points/edit', { raw: JSON.stringify({ oId: ALICE.oId, point: 1, memo: 'x'.repeat(1024 * 1024 - 100) }) });
  assertInvalid(under, 'memo', 'must be at most 255 characters');
});

validation('an unknown route is a JSON 404', async (c) => {
  for (const path of ['/nope', '/adm/nope', '/adm/points', '/adm/vip']) {
    const res = await send(c, 'GET', path);
    assert.is(res.status, 404, `${path}: ${res.text}`);
    assert.equal(res.body, { code: 404, message: `No route for GET ${path}`, data: { reason: 'route_not_found' } });
  }
  const post = await send(c, 'POST', '/adm/points/add', { body: {} });
  assert.equal([post.status, post.body.code], [404, 404]);
});

validation('a wrong method is 405 in the error form, with Allow', async (c) => {
  const get = await send(c, 'GET', '/adm/points/edit');
  assert.is(get.status, 405, get.text);
  assert.is(get.headers.get('allow'), 'POST');
  assert.equal(Object.keys(get.body).sort(), ['code', 'data', 'message']);
  assert.is(get.body.code, 405);
  assert.equal(get.body.data, { reason: 'method_not_allowed' });
  assert.match(get.body.message, /GET/);
  const post = await send(c, 'POST', `/adm/liveness/${ALICE.oId}`, { body: {} });
  assert.equal([post.status, post.body.code, post.headers.get('allow')], [405, 405, 'HEAD, GET']);
  const del = await send(c, 'DELETE', '/adm/vip/submit');
  assert.equal([del.status, del.body.code], [405, 405]);
});

validation('no answer carries a stack trace or an internal error name', async (c) => {
  assert.ok(c.answers.length > 40, `checked ${c.answers.length} answers`);
  for (const res of c.answers) {
    assert.not.match(res.text, /\n\s+at \S/, res.text);
    assert.not.match(res.text, /\bat .+\.(ts|js):\d+/, res.text);
    assert.not.match(res.text, /(Error|SyntaxError|TypeError):/, res.text);
    assert.not.match(res.text, /node_modules|\/src\//, res.text);
  }
});

validation.run();
