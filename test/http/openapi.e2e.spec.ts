// API description: GET /openapi.json is an OpenAPI 3.1 document of every endpoint,
// generated from the handlers' own valibot schemas; GET /docs renders it from local assets.
import type Router from '@koa/router';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { createHttpApp } from '../../src/http/app.js';
import { EXAMPLE_OID } from '../../src/http/openapi.js';
import { DEMO_USERS } from '../../src/community/demoUsers.js';
import * as res from '../../src/contract/answers.js';
import { createLogger } from '../../src/log.js';
import { ALICE, startHarness, type Answer, type Harness } from '../support/harness.js';
import type { OpenApiDocument } from '../support/openApiDocument.js';

const root = new URL('../..', import.meta.url).pathname;

async function withHarness(run: (h: Harness, doc: OpenApiDocument) => Promise<void>, env: Record<string, string> = {}) {
  const h = await startHarness({ env });
  try {
    const answer = await h.get<OpenApiDocument>('/openapi.json');
    assert.is(answer.status, 200, answer.text);
    assert.match(answer.headers.get('content-type') ?? '', /application\/json/);
    await run(h, answer.body);
  } finally {
    await h.close();
  }
}

/** Every `METHOD /path` the app's routers serve, in OpenAPI path form (`:oId` → `{oId}`). */
function servedRoutes(h: Harness): Set<string> {
  const app = createHttpApp(h.service.deps, createLogger('silent'));
  const routes = new Set<string>();
  for (const middleware of app.middleware as Array<{ router?: Router }>) {
    for (const layer of middleware.router?.stack ?? []) {
      if (typeof layer.path !== 'string') continue;
      const path = layer.path.replace(/:(\w+)/g, '{$1}');
      for (const method of layer.methods) if (method !== 'HEAD') routes.add(`${method} ${path}`);
    }
  }
  return routes;
}

function documentedRoutes(doc: OpenApiDocument): Set<string> {
  const routes = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) for (const method of Object.keys(item)) routes.add(`${method.toUpperCase()} ${path}`);
  return routes;
}

/** Follows a local `$ref` (`#/components/…`) to what it names. */
const resolve = <T extends { $ref?: string }>(doc: OpenApiDocument, schema: T): T => {
  if (!schema.$ref) return schema;
  const ref = schema.$ref;
  assert.ok(ref.startsWith('#/'), `${ref} is local`);
  const target = ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined), doc);
  assert.ok(target, `${ref} resolves`);
  return resolve(doc, target as T);
};

test('an OpenAPI 3.1 document with the apiKey header scheme on every admin operation', () =>
  withHarness(async (_h, doc) => {
    assert.is(doc.openapi, '3.1.0');
    assert.is(doc.info.title, 'community-bridge');
    assert.type(doc.info.version, 'string');
    assert.equal(doc.components.securitySchemes.apiKey, { ...doc.components.securitySchemes.apiKey, type: 'apiKey', in: 'header', name: 'apiKey' });
    const operationIds = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.ok(['get', 'post', 'put', 'patch', 'delete'].includes(method), where);
        assert.type(op.summary, 'string', where);
        assert.ok(op.responses?.['200'], `${where} documents its success`);
        assert.not.ok(operationIds.has(op.operationId), `${where}: operationId ${op.operationId} is unique`);
        operationIds.add(op.operationId);
        // Every {param} of the path is declared as a required path parameter.
        for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
          assert.ok(
            op.parameters?.some((p) => p.in === 'path' && p.name === name && p.required === true),
            `${where} declares {${name}}`,
          );
        }
        if (path.startsWith('/adm/')) {
          assert.equal(op.security, [{ apiKey: [] }], `${where} needs the apiKey header`);
          // The spec's own bodies for the key checks; the rate limit's error body for 429.
          const errorSchemas = { '401': 'InvalidApiKeyBody', '403': 'PermissionDeniedBody', '429': 'Error429' };
          for (const [status, component] of Object.entries(errorSchemas)) {
            assert.equal(op.responses[status]!.content!['application/json']!.schema, { $ref: `#/components/schemas/${component}` }, `${where} ${status}`);
          }
          const idempotencyKey = (op.parameters ?? []).some((p) => resolve(doc, p).name === 'Idempotency-Key');
          assert.is(idempotencyKey, method === 'post', `${where}: Idempotency-Key on admin POSTs`);
        } else {
          assert.equal(op.security, [], `${where} needs no key`);
        }
      }
    }
    // Every reference in the document resolves.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    assert.ok(refs.length > 10);
    for (const ref of refs) resolve(doc, { $ref: JSON.parse(`{${ref}}`).$ref });
    // Every error body, whatever its status, has the spec's error form.
    const errors = doc.components.schemas.ErrorBody!.anyOf!.map((member) => resolve(doc, member));
    assert.ok(errors.length > 10, `the error bodies (${errors.length})`);
    for (const error of errors) assert.equal(error.required, ['code', 'message', 'data']);
  }));

test("the document states the configured Idempotency-Key retention, not the default's", () =>
  withHarness(
    async (h, doc) => {
      assert.match(doc.components.parameters.IdempotencyKey!.description!, /\(kept 1\.5 h, across restarts\)/);
      assert.match(doc.paths['/adm/points/edit']!.post!.responses['422']!.description!, /used in the last 1\.5 h with a different body/);
      assert.not.match((await h.get('/openapi.json')).text, /\b24 h\b/, 'nothing left of the 24 h default');
    },
    { IDEMPOTENCY_TTL_HOURS: '1.5' },
  ));

test('every route the app serves under /adm is documented, and every documented route is served', () =>
  withHarness(async (h, doc) => {
    const served = servedRoutes(h);
    const documented = documentedRoutes(doc);
    const admin = [...served].filter((route) => route.split(' ')[1]!.startsWith('/adm/'));
    assert.ok(admin.length >= 12, `found the admin routes (${admin.length})`);
    for (const route of admin) assert.ok(documented.has(route), `${route} is in the document`);
    for (const route of ['GET /adm/audit/points/{oId}', 'GET /adm/audit/vip/{oId}', 'GET /openapi.json', 'GET /docs']) assert.ok(served.has(route) && documented.has(route), route);
    for (const route of documented) assert.ok(served.has(route), `${route} is served`);
    // The login path is the configured COMMUNITY_NAME's.
    assert.ok(documented.has('GET /fishpi/login') && documented.has('GET /fishpi/callback'));
  }));

test("request schemas carry the spec's fields, required as the spec says", () =>
  withHarness(async (_h, doc) => {
    const body = (path: string) => resolve(doc, doc.paths[path]!.post!.requestBody!.content['application/json']!.schema!);
    const expected: Record<string, { required: string[]; optional?: string[] }> = {
      '/adm/points/edit': { required: ['oId', 'point', 'memo'] },
      '/adm/medal/give': { required: ['oId', 'name', 'description', 'attr'], optional: ['data'] },
      '/adm/medal/remove': { required: ['oId', 'name'] },
      '/adm/items/query': { required: ['oId'] },
      '/adm/items/edit': { required: ['oId', 'item', 'sum'] },
      '/adm/vip/submit': { required: ['oId', 'quality', 'expired'] },
      '/adm/vip/batch-submit': { required: ['oId', 'vips'] },
      '/adm/message/push': { required: ['name', 'data'], optional: ['oIds', 'userIds'] },
    };
    for (const [path, fields] of Object.entries(expected)) {
      const schema = body(path);
      assert.is(schema.type, 'object', path);
      assert.equal([...schema.required!].sort(), [...fields.required].sort(), `${path} required`);
      assert.equal(Object.keys(schema.properties!).sort(), [...fields.required, ...(fields.optional ?? [])].sort(), `${path} properties`);
    }
    const points = body('/adm/points/edit').properties!;
    assert.is(points.point!.type, 'integer');
    assert.match(points.point!.description!, /must not be 0/);
    assert.equal(resolve(doc, body('/adm/vip/submit').properties!.quality!).enum, ['vip', 'svip']);
    // The transform to an ISO instant still converts, as the wire form the spec shows.
    const expired = resolve(doc, body('/adm/vip/submit').properties!.expired!);
    assert.is(expired.type, 'string');
    assert.ok(new RegExp(expired.pattern!).test('2027-01-01 00:00:00'));
    assert.not.ok(new RegExp(expired.pattern!).test('2027-01-01T00:00:00Z'));
    const entry = resolve(doc, body('/adm/vip/batch-submit').properties!.vips!.items!);
    assert.equal(entry.required, ['quality', 'expired']);
    assert.match(body('/adm/message/push').description!, /at least one of oIds and userIds/);

    const audit = doc.paths['/adm/audit/points/{oId}']!.get!;
    assert.equal(
      audit.parameters!.map((p) => `${p.in} ${p.name}`),
      ['path oId', 'query limit', 'query after', 'query before'],
    );
    const page = resolve(doc, audit.responses['200']!.content!['application/json']!.schema!);
    const item = resolve(doc, page.properties!.data!.properties!.items!.items!);
    assert.equal(item.required, ['position', 'time', 'appId', 'keyId', 'operationId', 'request', 'outcome']);
    assert.equal(resolve(doc, item.properties!.outcome!).properties!.status!.enum, ['applied', 'rejected', 'failed', 'unknown', 'pending']);
    const bad = doc.paths['/adm/points/edit']!.post!.responses['400']!.content!['application/json']!;
    assert.equal((bad.examples!.validation_failed!.value.data as { issues: unknown }).issues, [{ field: 'oId', message: 'is required' }]);
  }));

test('real answers have the documented shapes', () =>
  withHarness(async (h) => {
    const { key } = await h.key(['*']);
    const check = async (schema: v.GenericSchema, pending: Promise<Answer>, status = 200) => {
      const answer = await pending;
      assert.is(answer.status, status, answer.text);
      const parsed = v.safeParse(schema, answer.body);
      assert.ok(parsed.success, `${answer.text}: ${JSON.stringify(parsed.issues)}`);
    };
    await check(res.SuccessBody, h.post('/adm/points/edit', { oId: ALICE.oId, point: 1, memo: 'shape' }, key));
    await check(res.ItemsBody, h.post('/adm/items/query', { oId: ALICE.oId }, key));
    await check(res.LivenessBody, h.get(`/adm/liveness/${ALICE.oId}`, key));
    await check(res.VipSubmitAnswer, h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2027-01-01 00:00:00' }, key));
    await check(res.VipListBody, h.get(`/adm/vip/${ALICE.oId}`, key));
    await check(
      res.VipBatchAnswer,
      h.post(
        '/adm/vip/batch-submit',
        {
          oId: ALICE.oId,
          vips: [
            { quality: 'svip', expired: '2027-01-01 00:00:00' },
            { quality: 'x', expired: '' },
          ],
        },
        key,
      ),
    );
    await check(res.PointsAuditPage, h.get(`/adm/audit/points/${ALICE.oId}`, key));
    await check(res.VipAuditPage, h.get(`/adm/audit/vip/${ALICE.oId}?limit=1`, key));
    await check(res.ClientNotFoundBody, h.get('/adm/user/get?client_id=nobody', key), 404);
    await check(res.ErrorBody, h.post('/adm/points/edit', {}, key), 400);
    await check(res.ErrorBody, h.get(`/adm/vip/${ALICE.oId}`), 401);
    await check(res.HealthBody, h.get('/healthz'));
    await check(res.ReadyBody, h.get('/readyz'));
  }));

test('docs/api.md has a section for every route the app serves, and none for a route it does not serve', () =>
  withHarness(async (h) => {
    const served = new Set([...servedRoutes(h)].map((route) => route.replace(/\{(\w+)\}/g, ':$1')));
    const headings = readFileSync(join(root, 'docs/api.md'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('### '));
    const documented = new Set(headings.flatMap((line) => [...line.matchAll(/`([A-Z]+ \/[^`]*)`/g)].map((m) => m[1]!)));
    assert.ok(documented.size >= 20, `found the sections (${documented.size})`);
    assert.equal(
      [...served].filter((route) => !documented.has(route)),
      [],
      'served but not in docs/api.md',
    );
    assert.equal(
      [...documented].filter((route) => !served.has(route)),
      [],
      'in docs/api.md but not served',
    );
  }));

test('/docs is a readable page whose assets are all local and load', () =>
  withHarness(async (h) => {
    const page = await h.get('/docs');
    assert.is(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.text, /<title>[^<]+<\/title>/);
    const urls = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(urls.length >= 3, `asset URLs found: ${urls}`);
    assert.not.match(page.text, /https?:\/\//, 'no absolute URL: nothing from a CDN');
    for (const url of urls) {
      assert.ok(url.startsWith('/') && !url.startsWith('//'), `${url} is local`);
      const asset = await h.get(url);
      assert.is(asset.status, 200, url);
      if (url.endsWith('.js')) assert.match(asset.headers.get('content-type') ?? '', /javascript/, url);
      if (url.endsWith('.css')) assert.match(asset.headers.get('content-type') ?? '', /text\/css/, url);
    }
    const init = await h.get('/docs/assets/init.js');
    assert.match(init.text, /url: '\/openapi\.json'/);
    assert.match(init.text, /validatorUrl: null/, 'no badge from an outside validator');
    // Only the listed files are served: nothing else of the package, no path outside it.
    for (const path of ['/docs/assets/index.html', '/docs/assets/package.json', '/docs/assets/..%2F..%2Fpackage.json']) {
      assert.is((await h.get(path)).status, 404, path);
    }
  }));

test("the document's example oId is alice's in the dev store, so that Try it out works against npm run dev", () => {
  assert.is(DEMO_USERS.find((user) => user.userName === 'alice')?.oId, EXAMPLE_OID);
});

test.run();
