// Typed, machine-readable errors: every error answer the API gives, provoked for real, is valid
// against the OpenAPI document's schema for its route and status (so `data.reason` is one that
// status allows, with its fields), says `Retry-After` exactly when its reason carries
// `retryAfterSeconds`, and the spec's own bodies (401, 403, `/adm/user/get`'s 404) are unchanged.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { ERROR_REASONS, ErrorBody, type ErrorReason } from '../../src/contract/answers.js';
import * as requests from '../../src/contract/requests.js';
import { startingResponder } from '../../src/http/starting.js';
import { FaultyStore } from '../support/faultyStore.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, startHarness, type Answer, type Harness, type HarnessOptions } from '../support/harness.js';
import type { OpenApiDocument, Schema } from '../support/openApiDocument.js';
import { openOwnSocket } from '../support/request.js';

// ---- A JSON Schema validator for the keywords the document uses; any other keyword fails loudly,
// so that a schema it cannot judge never passes by being ignored.

const ANNOTATIONS = new Set(['description', 'title', 'examples', 'discriminator', 'format', 'default']);
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const deepEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

/** The schema a local `$ref` (`#/…`) names in the document. */
function resolveRef(doc: object, ref: string): Schema {
  assert.ok(ref.startsWith('#/'), `${ref} is local`);
  const target = ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (isObject(node) ? node[part] : undefined), doc);
  assert.ok(target, `${ref} resolves`);
  return target as Schema;
}

/** Problems of `value` against `schema` (none: valid). */
function validate(doc: object, schema: Schema, value: unknown, at = '$'): string[] {
  const problems: string[] = [];
  const fail = (what: string) => problems.push(`${at}: ${what} (${JSON.stringify(value)?.slice(0, 120)})`);
  const { minItems, maxItems, minLength, maxLength, minimum, maximum } = schema;
  for (const keyword of Object.keys(schema)) {
    switch (keyword) {
      case '$ref':
        problems.push(...validate(doc, resolveRef(doc, schema.$ref!), value, at));
        break;
      case 'type': {
        const type = schema.type!;
        if (!(Array.isArray(type) ? type : [type]).some((t) => typeMatches(t, value))) fail(`is not of type ${type}`);
        break;
      }
      case 'const':
        if (!deepEqual(value, schema.const)) fail(`is not ${JSON.stringify(schema.const)}`);
        break;
      case 'enum':
        if (!schema.enum!.some((option) => deepEqual(option, value))) fail(`is not one of ${JSON.stringify(schema.enum)}`);
        break;
      case 'properties':
        if (isObject(value)) for (const [name, sub] of Object.entries(schema.properties!)) if (name in value) problems.push(...validate(doc, sub, value[name], `${at}.${name}`));
        break;
      case 'required':
        if (isObject(value)) for (const name of schema.required!) if (!(name in value)) fail(`lacks ${name}`);
        break;
      case 'additionalProperties': {
        if (!isObject(value)) break;
        const rule = schema.additionalProperties!;
        for (const name of Object.keys(value)) {
          if (name in (schema.properties ?? {})) continue;
          if (rule === false) fail(`has ${name}, which it may not`);
          else if (rule !== true) problems.push(...validate(doc, rule, value[name], `${at}.${name}`));
        }
        break;
      }
      case 'propertyNames':
        if (isObject(value)) for (const name of Object.keys(value)) problems.push(...validate(doc, schema.propertyNames!, name, `${at}[key ${name}]`));
        break;
      case 'items':
        if (Array.isArray(value)) {
          for (const [i, item] of value.entries()) problems.push(...validate(doc, schema.items!, item, `${at}[${i}]`));
        }
        break;
      case 'minItems':
        if (Array.isArray(value) && value.length < minItems!) fail(`has fewer than ${minItems} items`);
        break;
      case 'maxItems':
        if (Array.isArray(value) && value.length > maxItems!) fail(`has more than ${maxItems} items`);
        break;
      case 'minLength':
        if (typeof value === 'string' && value.length < minLength!) fail(`is shorter than ${minLength}`);
        break;
      case 'maxLength':
        if (typeof value === 'string' && value.length > maxLength!) fail(`is longer than ${maxLength}`);
        break;
      case 'minimum':
        if (typeof value === 'number' && value < minimum!) fail(`is below ${minimum}`);
        break;
      case 'maximum':
        if (typeof value === 'number' && value > maximum!) fail(`is above ${maximum}`);
        break;
      case 'pattern':
        if (typeof value === 'string' && !new RegExp(schema.pattern!, 'u').test(value)) fail(`does not match ${schema.pattern}`);
        break;
      case 'oneOf': {
        const matching = schema.oneOf!.filter((option) => validate(doc, option, value, at).length === 0).length;
        if (matching !== 1) fail(`matches ${matching} of its oneOf schemas, not exactly one`);
        break;
      }
      case 'anyOf':
        if (!schema.anyOf!.some((option) => validate(doc, option, value, at).length === 0)) fail('matches none of its anyOf schemas');
        break;
      default:
        if (!ANNOTATIONS.has(keyword)) throw new Error(`${at}: the test's validator does not know the keyword ${keyword}`);
    }
  }
  return problems;
}

test('the validator refuses what it should', () => {
  const doc = { components: { schemas: { D: { type: 'object', properties: { reason: { const: 'a', type: 'string' } }, required: ['reason'], additionalProperties: false } } } };
  const body = { type: 'object', properties: { data: { oneOf: [{ $ref: '#/components/schemas/D' }] } }, required: ['data'] };
  assert.equal(validate(doc, body, { data: { reason: 'a' } }), []);
  assert.is(validate(doc, body, { data: { reason: 'b' } }).length, 1);
  assert.is(validate(doc, body, { data: { reason: 'a', extra: 1 } }).length, 1);
  assert.is(validate(doc, body, {}).length, 1);
  assert.throws(() => validate(doc, { if: {} } as Schema, 1), /does not know the keyword if/);
});

// ---- Live answers, each checked against the document.

/** Every reason an answer carried, for the coverage check at the end. */
const provoked = new Set<string>();

/** The document's schema for this route and status. */
function documented(doc: OpenApiDocument, method: string, path: string, status: number): Schema {
  const response = doc.paths[path]?.[method]?.responses?.[String(status)];
  assert.ok(response, `the document lists ${status} for ${method.toUpperCase()} ${path}`);
  const schema = response.content?.['application/json']?.schema;
  assert.ok(schema, `${method.toUpperCase()} ${path} ${status} has a JSON schema`);
  return schema!;
}

/** A live error answer: valid against the schema the document gives it, its reason allowed for its status. */
function check(
  doc: OpenApiDocument,
  answer: { status: number; body: unknown; headers: Headers | IncomingHttpHeaders },
  schema: Schema,
  expect: { status: number; reason?: ErrorReason },
) {
  const where = `${expect.status} ${expect.reason ?? '(spec body)'}: ${JSON.stringify(answer.body)}`;
  assert.is(answer.status, expect.status, where);
  assert.equal(validate(doc, schema, answer.body), [], where);
  // The contract's own schema agrees with the document's.
  assert.ok(v.safeParse(ErrorBody, answer.body).success, `the contract's ErrorBody takes ${where}`);
  // The contract's ErrorBody took it: the error form.
  const body = answer.body as { code: number; data: { reason?: string; retryAfterSeconds?: number } };
  assert.is(body.code, expect.status, where);
  const header = answer.headers instanceof Headers ? answer.headers.get('retry-after') : (answer.headers['retry-after'] as string | undefined);
  if (expect.reason === undefined) {
    assert.equal(body.data, {}, where);
    return;
  }
  assert.is(body.data.reason, expect.reason, where);
  assert.ok((ERROR_REASONS[expect.reason].statuses as readonly number[]).includes(expect.status), where);
  // Retry-After exactly when the reason carries retryAfterSeconds, and the same number.
  assert.is(header ?? undefined, body.data.retryAfterSeconds === undefined ? undefined : String(body.data.retryAfterSeconds), `Retry-After of ${where}`);
  provoked.add(expect.reason);
}

const adm = (doc: OpenApiDocument, answer: Answer, method: 'get' | 'post', path: string, status: number, reason?: ErrorReason) =>
  check(doc, answer, documented(doc, method, path, status), { status, ...(reason && { reason }) });

async function withHarness(options: HarnessOptions, run: (h: Harness, doc: OpenApiDocument) => Promise<void>) {
  const h = await startHarness(options);
  try {
    await run(h, (await h.get<OpenApiDocument>('/openapi.json')).body);
  } finally {
    await h.close();
  }
}

const POINTS = '/adm/points/edit';

test('input, keys, users, routes, conflicts, the Idempotency-Key and the platform: each error its reason', () =>
  withHarness({ env: { COMMUNITY_TIMEOUT_MS: '300' } }, async (h, doc) => {
    const { key } = await h.key(['*']);
    const request = (method: string, path: string, init: { body?: unknown; raw?: string; headers?: Record<string, string>; apiKey?: string } = {}) =>
      h.request(method, path, { apiKey: key, ...init });

    // Input.
    adm(doc, await h.post(POINTS, {}, key), 'post', POINTS, 400, 'validation_failed');
    adm(doc, await request('POST', POINTS, { raw: '{"oId":' }), 'post', POINTS, 400, 'validation_failed');
    const badKey = await request('POST', POINTS, { body: { oId: ALICE.oId, point: 1, memo: 'm' }, headers: { 'Idempotency-Key': 'two words' } });
    adm(doc, badKey, 'post', POINTS, 400, 'validation_failed');
    assert.equal(badKey.body.data.issues, [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
    const huge = await request('POST', POINTS, { raw: JSON.stringify({ oId: ALICE.oId, point: 1, memo: 'x'.repeat(1024 * 1024) }) });
    adm(doc, huge, 'post', POINTS, 413, 'payload_too_large');

    // The spec's own bodies, exactly.
    const missing = await h.get(`/adm/vip/${ALICE.oId}`);
    assert.equal([missing.status, missing.body], [401, { code: 401, message: 'Invalid apiKey', data: {} }]);
    adm(doc, missing, 'get', '/adm/vip/{oId}', 401);
    const invalid = await h.get(`/adm/vip/${ALICE.oId}`, 'cbk_not-a-key');
    assert.equal([invalid.status, invalid.body], [401, { code: 401, message: 'Invalid apiKey', data: {} }]);
    const { key: reader } = await h.key(['vip:read']);
    const denied = await h.post(POINTS, { oId: ALICE.oId, point: 1, memo: 'm' }, reader);
    assert.equal([denied.status, denied.body], [403, { code: 403, message: 'No permission to access this resource', data: {} }]);
    adm(doc, denied, 'post', POINTS, 403);
    const noClient = await h.get('/adm/user/get?client_id=nobody', key);
    assert.equal([noClient.status, noClient.body], [404, { data: {}, message: 'Client not found or disconnected.', status: 404 }]);
    assert.equal(validate(doc, documented(doc, 'get', '/adm/user/get', 404), noClient.body), []);

    // Users, records, routes.
    const stranger = await h.post(POINTS, { oId: '99999999', point: 1, memo: 'm' }, key);
    adm(doc, stranger, 'post', POINTS, 404, 'user_not_found');
    assert.is(stranger.body.data.oId, '99999999');
    adm(doc, await h.post('/adm/operations/qnaivgfy0durkko/resolve', { applied: true }, key), 'post', '/adm/operations/{operationId}/resolve', 404, 'not_found');
    const noRoute = await h.get('/adm/nothing', key);
    check(doc, noRoute, { $ref: '#/components/schemas/Error404' }, { status: 404, reason: 'route_not_found' });
    const wrongMethod = await h.get(POINTS, key);
    check(doc, wrongMethod, { $ref: '#/components/schemas/Error405' }, { status: 405, reason: 'method_not_allowed' });
    const foreign = await h.request('POST', '/api/logout', { headers: { Origin: 'https://evil.example' } });
    check(doc, foreign, documented(doc, 'post', '/api/logout', 403), { status: 403, reason: 'foreign_origin' });

    // A deduction the user cannot afford.
    adm(doc, await h.post('/adm/items/edit', { oId: BOB.oId, item: 'checkin1day', sum: -1 }, key), 'post', '/adm/items/edit', 409, 'conflict');

    // The Idempotency-Key: reused with another body.
    const push = (name: string) => request('POST', '/adm/message/push', { body: { oIds: [ALICE.oId], name, data: {} }, headers: { 'Idempotency-Key': 'reuse-1' } });
    assert.is((await push('first')).status, 200);
    adm(doc, await push('second'), 'post', '/adm/message/push', 422, 'idempotency_key_reused');

    // A write the platform never answers: while it runs, its key is claimed; then its outcome is
    // unknown, with the operation named; a retry with the key answers the same.
    h.sim.faultNext('/user/edit/points', { kind: 'hang' });
    const keyed = { body: { oId: ALICE.oId, point: 5, memo: 'hangs' }, headers: { 'Idempotency-Key': 'hang-1' } };
    const first = request('POST', POINTS, keyed);
    await eventually(async () => (h.sim.arrivals('/user/edit/points').some((a) => a.body.memo === 'hangs') ? true : undefined), 'the points edit reached the platform');
    adm(doc, await request('POST', POINTS, keyed), 'post', POINTS, 409, 'claim_in_progress');
    const unknown = await first;
    adm(doc, unknown, 'post', POINTS, 504, 'outcome_unknown');
    assert.match(unknown.body.data.operationId, /^[a-z0-9]{15}$/);
    assert.is(unknown.body.data.status, 'unknown');
    const again = await request('POST', POINTS, keyed);
    adm(doc, again, 'post', POINTS, 504, 'outcome_unknown');
    assert.is(again.body.data.operationId, unknown.body.data.operationId);

    // Resolved as not applied: the key says so; resolving again conflicts.
    const resolvePath = `/adm/operations/${unknown.body.data.operationId}/resolve`;
    assert.is((await h.post(resolvePath, { applied: false, note: 'not in the ledger' }, key)).status, 200);
    const notApplied = await request('POST', POINTS, keyed);
    adm(doc, notApplied, 'post', POINTS, 409, 'operation_not_applied');
    assert.equal([notApplied.body.data.operationId, notApplied.body.data.contradicted], [unknown.body.data.operationId, false]);
    adm(doc, await h.post(resolvePath, { applied: true }, key), 'post', '/adm/operations/{operationId}/resolve', 409, 'conflict');

    // A write whose connection broke after sending: 502, and not a plain platform failure.
    h.sim.faultNext('/user/edit/points', { kind: 'applyThenReset' });
    const broken = await h.post(POINTS, { oId: ALICE.oId, point: 1, memo: 'reset' }, key);
    adm(doc, broken, 'post', POINTS, 502, 'outcome_unknown');
    assert.match(broken.body.data.operationId, /^[a-z0-9]{15}$/);

    // The user lookup fails, or does not answer: nothing changed.
    h.sim.failNext(1, 'http500');
    const failed = await h.get(`/adm/vip/${ALICE.oId}`, key);
    adm(doc, failed, 'get', '/adm/vip/{oId}', 502, 'platform_failed');
    assert.equal(Object.keys(failed.body.data), ['reason'], 'a plain platform failure names no operation');
    h.sim.faultNext('/api/user/getInfoById', { kind: 'hang' });
    adm(doc, await h.get(`/adm/liveness/${ALICE.oId}`, key), 'get', '/adm/liveness/{oId}', 504, 'platform_timeout');
  }));

test("the store's own failure (a full disk) is 503 store_unavailable with Retry-After, nothing internal said", async () => {
  let faults: FaultyStore | undefined;
  await withHarness({ wrapStore: (store) => (faults = new FaultyStore(store)) }, async (h, doc) => {
    const { key } = await h.key(['*']);
    faults!.appendFailure = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const failed = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'n', data: {} }, key);
    faults!.appendFailure = undefined;
    adm(doc, failed, 'post', '/adm/message/push', 503, 'store_unavailable');
    assert.is(failed.headers.get('retry-after'), '1');
    assert.not.match(failed.text, /SQLITE|disk/);
  });
});

/** A request on its own connection, kept open (a stream) until closed; the body of a refusal parsed. */
async function open(url: string) {
  const answer = await openOwnSocket(url);
  return { ...answer, body: answer.status === 200 ? undefined : (JSON.parse(answer.text) as unknown) };
}

test('limits: the rate limit, the platform refusing, a missing key, the stream caps', async () => {
  const env = {
    COMMUNITY_KEY: '',
    COMMUNITY_KEY_POINT: SIMULATOR_KEY,
    COMMUNITY_POINTS_SOURCE: 'true',
    RATE_LIMIT_PER_SECOND: '1',
    RATE_LIMIT_BURST: '1',
    REALTIME_MAX_CONNECTIONS_PER_IP: '1',
  };
  await withHarness({ env }, async (h, doc) => {
    const medal = { oId: ALICE.oId, name: 'n', description: 'd', attr: 'url=https://x.test/m.png&backcolor=fff&fontcolor=000' };
    adm(doc, await h.post('/adm/medal/give', medal, (await h.key(['*'])).key), 'post', '/adm/medal/give', 503, 'not_configured');
    const refused = await h.post(POINTS, { oId: BOB.oId, point: -20, memo: 'too much' }, (await h.key(['*'])).key);
    adm(doc, refused, 'post', POINTS, 422, 'platform_rejected');
    assert.is(refused.body.data.platformMessage, '积分不足');
    const { key } = await h.key(['*']);
    assert.is((await h.get(`/adm/audit/vip/${ALICE.oId}`, key)).status, 200);
    adm(doc, await h.get(`/adm/audit/vip/${ALICE.oId}`, key), 'get', '/adm/audit/vip/{oId}', 429, 'rate_limited');

    const stream = await open(`${h.url}/api/realtime`);
    try {
      assert.is(stream.status, 200);
      const second = await open(`${h.url}/api/realtime`);
      check(doc, second, documented(doc, 'get', '/api/realtime', 429), { status: 429, reason: 'too_many_connections' });
    } finally {
      stream.close();
    }
  });
  await withHarness({ env: { REALTIME_MAX_CONNECTIONS: '1' } }, async (h, doc) => {
    const stream = await open(`${h.url}/api/realtime`);
    try {
      const second = await open(`${h.url}/api/realtime`);
      check(doc, second, documented(doc, 'get', '/api/realtime', 503), { status: 503, reason: 'unavailable' });
    } finally {
      stream.close();
    }
  });
});

test('a node that is starting answers 503 not_ready with Retry-After, as the document says for every admin route', () =>
  withHarness({}, async (_h, doc) => {
    const server = createServer(startingResponder());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const [method, path, template] of [
        ['post', POINTS, POINTS],
        ['get', `/adm/vip/${ALICE.oId}`, '/adm/vip/{oId}'],
        ['post', '/adm/message/push', '/adm/message/push'],
      ] as const) {
        const res = await fetch(url + path, { method: method.toUpperCase() });
        const answer = { status: res.status, body: await res.json(), headers: res.headers };
        check(doc, answer, documented(doc, method, template, 503), { status: 503, reason: 'not_ready' });
      }
    } finally {
      server.close();
    }
  }));

test('the reasons above are every reason the API answers with, bar those no test can provoke on demand', () => {
  // claim_lost and concurrent_update need a request stalled past the claim window or a store
  // contended for seconds: their suites are test/faults; the console's own are test/console.
  // internal_error is what a bug answers: every failure a test can cause on demand, the store's
  // own included (store_unavailable), has a reason of its own.
  const elsewhere = new Set(['claim_lost', 'concurrent_update', 'unauthenticated', 'forbidden', 'internal_error']);
  const all = Object.keys(ERROR_REASONS).filter((reason) => !elsewhere.has(reason));
  assert.equal(
    [...all].filter((reason) => !provoked.has(reason)),
    [],
    'reasons not provoked',
  );
});

// ---- The document itself.

test("every error example is a body its schema takes, with its status as code; request examples use the dev store's alice", () =>
  withHarness({}, async (_h, doc) => {
    let examples = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const media = response.content?.['application/json'];
          if (!media || !/^[45]\d\d$/.test(status)) continue;
          const values = [...(media.example ? [media.example] : []), ...Object.values(media.examples ?? {}).map((e) => e.value)];
          assert.ok(values.length > 0, `${method} ${path} ${status} has an example`);
          for (const value of values) {
            examples++;
            // The error form's code, or the status of the spec's and readiness's own forms.
            assert.is(typeof value.code === 'number' ? value.code : value.status === 'not ready' ? 503 : value.status, Number(status), `${method} ${path} ${status}: never code 0`);
            assert.equal(validate(doc, media.schema!, value), [], `${method} ${path} ${status}: ${JSON.stringify(value)}`);
          }
        }
        const body = operation.requestBody?.content?.['application/json'];
        if (body) {
          assert.ok(body.example, `${method} ${path} has a request example`);
          assert.equal(validate(doc, body.schema!, body.example), [], `${method} ${path} request example`);
          if ('oId' in body.example) assert.is(body.example.oId, ALICE.oId, `${method} ${path}: alice`);
        }
        for (const parameter of operation.parameters ?? []) if (parameter.name === 'oId') assert.is(parameter.example, ALICE.oId, `${method} ${path} oId`);
      }
    }
    assert.ok(examples > 50, `checked ${examples} error examples`);
    // The request examples are what the handlers take, not only what the document says.
    const requestExample = (path: string) => doc.paths[path]!.post!.requestBody!.content['application/json']!.example;
    assert.ok(v.safeParse(requests.PointsEditBody, requestExample(POINTS)).success);
    assert.ok(v.safeParse(requests.MessagePushBody, requestExample('/adm/message/push')).success);
  }));

test("each status's data is one schema per reason, told apart by reason, with each reason's fields required", () =>
  withHarness({}, async (_h, doc) => {
    /** The schema of `data` in the error form of this status. */
    const dataOf = (status: number) => doc.components.schemas[`Error${status}`]!.properties!.data!;
    const data = resolveRef(doc, dataOf(504).oneOf![0]!.$ref!);
    assert.equal(data.required, ['reason', 'operationId', 'status']);
    assert.equal(data.properties!.status!.enum, ['pending', 'unknown']);
    assert.equal(dataOf(504).discriminator!.propertyName, 'reason');
    assert.equal(Object.keys(dataOf(504).discriminator!.mapping).sort(), ['outcome_unknown', 'platform_timeout']);
    assert.equal(Object.keys(dataOf(502).discriminator!.mapping).sort(), ['outcome_unknown', 'platform_failed']);
    for (const [reason, spec] of Object.entries(ERROR_REASONS)) {
      if ('consoleOnly' in spec) continue;
      for (const status of spec.statuses) {
        const member = dataOf(status);
        const refs = member.oneOf ? member.oneOf.map((m) => m.$ref!) : [member.$ref!];
        const found = refs.map((ref) => resolveRef(doc, ref)).find((s) => s.properties!.reason!.const === reason);
        assert.ok(found, `Error${status} has ${reason}`);
        if ('retryAfterSeconds' in spec.data.entries && reason !== 'unavailable') assert.ok(found!.required!.includes('retryAfterSeconds'), `${reason} requires retryAfterSeconds`);
      }
    }
  }));

test('docs/api.md lists every reason with its status', () => {
  const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('\n## Errors'), text.indexOf('\n## ', text.indexOf('\n## Errors') + 5));
  assert.ok(section.length > 500, 'an Errors section');
  for (const [reason, spec] of Object.entries(ERROR_REASONS)) {
    const row = section.split('\n').find((line) => line.includes(`\`${reason}\``) && line.startsWith('|'));
    assert.ok(row, `${reason} has a row`);
    for (const status of spec.statuses) assert.ok(row!.includes(String(status)), `${reason}'s row names ${status}`);
  }
});

test.run();
