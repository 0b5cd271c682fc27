// docs/api.md "Conventions" and docs/decisions.md "API keys and permissions": every admin endpoint checks the
// `apiKey` header in order — exists, enabled, not expired (401 Invalid apiKey for each, and for a
// revoked key) — then the endpoint's permission (403, naming it in X-Missing-Permission, the body
// the spec's). Generated from one table of endpoints.
import { WorkContext } from '../../src/system/workContext.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PERMISSIONS, type Permission } from '../../src/domain/permissions.js';
import { ALICE, startHarness, type Answer, type Harness } from '../support/harness.js';

const INVALID = '{"code":401,"message":"Invalid apiKey","data":{}}';
const FORBIDDEN = '{"code":403,"message":"No permission to access this resource","data":{}}';

interface Endpoint {
  method: 'GET' | 'POST';
  path: string;
  permission: Permission;
  /** A body the endpoint accepts (POST only). */
  body?: Record<string, unknown>;
  /** A body the endpoint refuses (POST only): a 401 must come before its 400. */
  invalid?: unknown;
}

const ATTR = 'url=https://example.test/medal.png&backcolor=ffffff&fontcolor=000000';
const ENDPOINTS: Endpoint[] = [
  { method: 'POST', path: '/adm/points/edit', permission: 'points:edit', body: { oId: ALICE.oId, point: 1, memo: 'auth matrix' }, invalid: { point: 'x' } },
  { method: 'POST', path: '/adm/medal/give', permission: 'medal:give', body: { oId: ALICE.oId, name: 'Auth', description: 'auth matrix', attr: ATTR }, invalid: { attr: 1 } },
  { method: 'POST', path: '/adm/medal/remove', permission: 'medal:remove', body: { oId: ALICE.oId, name: 'Auth' }, invalid: {} },
  { method: 'POST', path: '/adm/items/query', permission: 'items:query', body: { oId: ALICE.oId }, invalid: { oId: 5 } },
  { method: 'POST', path: '/adm/items/edit', permission: 'items:edit', body: { oId: ALICE.oId, item: 'checkin1day', sum: 1 }, invalid: { sum: 0.5 } },
  { method: 'GET', path: `/adm/liveness/${ALICE.oId}`, permission: 'liveness:read' },
  { method: 'GET', path: `/adm/vip/${ALICE.oId}`, permission: 'vip:read' },
  { method: 'POST', path: '/adm/vip/submit', permission: 'vip:write', body: { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, invalid: { quality: 'gold' } },
  {
    method: 'POST',
    path: '/adm/vip/batch-submit',
    permission: 'vip:write',
    body: { oId: ALICE.oId, vips: [{ quality: 'svip', expired: '2030-01-01 00:00:00' }] },
    invalid: { vips: [] },
  },
  { method: 'POST', path: '/adm/message/push', permission: 'message:push', body: { oIds: [ALICE.oId], name: 'hello', data: { n: 1 } }, invalid: { name: 'x' } },
];

interface Keys {
  unknown: string;
  disabled: string;
  revoked: string;
  expired: string;
  all: string;
  reEnabled: { id: string; key: string };
  only: Map<Permission, string>;
  allBut: Map<Permission, string>;
}

const auth = suite<{ h: Harness; keys: Keys }>('admin API authentication and permissions');

auth.before(async (context) => {
  const h = await startHarness();
  context.h = h;
  const service = h.keys();
  const star = async () => (await h.key(['*'])).key;
  const disabled = await h.key(['*']);
  await service.disable(WorkContext.unattributed, disabled.id);
  const revoked = await h.key(['*']);
  await service.revoke(WorkContext.unattributed, revoked.id);
  const expired = await h.key(['*']);
  await service.changeExpiry(WorkContext.unattributed, expired.id, '2020-01-01T00:00:00.000Z');
  const only = new Map<Permission, string>();
  const allBut = new Map<Permission, string>();
  for (const permission of new Set(ENDPOINTS.map((e) => e.permission))) {
    only.set(permission, (await h.key([permission])).key);
    allBut.set(permission, (await h.key(PERMISSIONS.filter((p) => p !== permission))).key);
  }
  context.keys = {
    unknown: `cbk_${'A'.repeat(27)}`,
    disabled: disabled.key,
    revoked: revoked.key,
    expired: expired.key,
    all: await star(),
    reEnabled: await h.key(['*']),
    only,
    allBut,
  };
});

auth.after(async ({ h }) => {
  await h?.close();
});

function call(h: Harness, endpoint: Endpoint, apiKey: string | undefined, body: unknown = endpoint.body): Promise<Answer> {
  return h.request(endpoint.method, endpoint.path, { apiKey, ...(endpoint.method === 'POST' ? { body } : {}) });
}

function assertExactly(res: Answer, status: number, text: string, label: string) {
  assert.is(res.status, status, `${label}: ${res.status} ${res.text}`);
  assert.is(res.text, text, label);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, label);
}

const invalidCases: Array<[string, (k: Keys) => string | undefined]> = [
  ['missing header', () => undefined],
  ['empty header', () => ''],
  ['unknown key', (k) => k.unknown],
  ['disabled key', (k) => k.disabled],
  ['revoked key', (k) => k.revoked],
  ['expired key', (k) => k.expired],
];

for (const endpoint of ENDPOINTS) {
  const name = `${endpoint.method} ${endpoint.path.replace(ALICE.oId, ':oId')}`;

  for (const [label, pick] of invalidCases) {
    auth(`${name}: ${label} → 401 Invalid apiKey`, async ({ h, keys }) => {
      assertExactly(await call(h, endpoint, pick(keys)), 401, INVALID, `${name} ${label}`);
    });
  }

  auth(`${name}: a valid key without ${endpoint.permission} → 403 No permission, the spec's body, the permission in X-Missing-Permission`, async ({ h, keys }) => {
    const res = await call(h, endpoint, keys.allBut.get(endpoint.permission));
    assertExactly(res, 403, FORBIDDEN, name);
    assert.is(res.headers.get('x-missing-permission'), endpoint.permission, name);
  });

  auth(`${name}: a key with exactly ${endpoint.permission} is let through`, async ({ h, keys }) => {
    const res = await call(h, endpoint, keys.only.get(endpoint.permission));
    assert.is(res.status, 200, `${name}: ${res.status} ${res.text}`);
    assert.is(res.body.code, 0);
  });

  auth(`${name}: a key with * is let through`, async ({ h, keys }) => {
    const res = await call(h, endpoint, keys.all);
    assert.is(res.status, 200, `${name}: ${res.status} ${res.text}`);
    assert.is(res.body.code, 0);
  });

  if (endpoint.invalid !== undefined) {
    auth(`${name}: an invalid key is refused (401) before the body is validated`, async ({ h, keys }) => {
      assertExactly(await call(h, endpoint, undefined, endpoint.invalid), 401, INVALID, `${name} no key`);
      assertExactly(await call(h, endpoint, keys.disabled, endpoint.invalid), 401, INVALID, `${name} disabled key`);
      assertExactly(await call(h, endpoint, keys.allBut.get(endpoint.permission), endpoint.invalid), 403, FORBIDDEN, `${name} unpermitted key`);
    });
  }
}

auth('without a valid key the body is not read: malformed JSON, a non-JSON body and an oversized body are all 401', async ({ h, keys }) => {
  for (const apiKey of [undefined, keys.unknown, keys.expired]) {
    const label = apiKey === undefined ? 'no key' : apiKey === keys.unknown ? 'unknown key' : 'expired key';
    assertExactly(await h.request('POST', '/adm/points/edit', { apiKey, raw: '{"oId":' }), 401, INVALID, `${label}, malformed JSON`);
    assertExactly(
      await h.request('POST', '/adm/vip/submit', { apiKey, raw: 'oId=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      401,
      INVALID,
      `${label}, form body`,
    );
    const huge = JSON.stringify({ oId: ALICE.oId, memo: 'x'.repeat(1024 * 1024 + 1), point: 1 });
    assertExactly(await h.request('POST', '/adm/points/edit', { apiKey, raw: huge }), 401, INVALID, `${label}, body over 1 MiB`);
  }
});

auth('an admin path that does not exist is a JSON 404 with or without a key: the key check belongs to the routes', async ({ h, keys }) => {
  for (const apiKey of [undefined, keys.all]) {
    const res = await h.get('/adm/no/such/thing', apiKey);
    assert.is(res.status, 404, res.text);
    assert.equal(res.body, { code: 404, message: 'No route for GET /adm/no/such/thing', data: { reason: 'route_not_found' } });
  }
});

auth("a path in another case or with a trailing slash is no route: nothing runs past a route's own checks", async ({ h, keys }) => {
  for (const path of ['/ADM/points/edit', '/Adm/Points/Edit', '/adm/points/edit/', '/adm/POINTS/edit']) {
    const res = await h.post(path, { oId: ALICE.oId, point: 1, memo: 'variant' }, keys.all);
    assert.is(res.status, 404, `${path}: ${res.text}`);
  }
  assert.is(h.sim.user(ALICE.oId)!.ledger.filter((e) => e.memo === 'variant').length, 0, 'no points moved');
});

auth('the header name is case-insensitive, as HTTP headers are', async ({ h, keys }) => {
  const res = await h.request('GET', `/adm/vip/${ALICE.oId}`, { headers: { APIKEY: keys.all } });
  assert.is(res.status, 200, res.text);
});

auth('a disabled key works again once re-enabled, and stops again when disabled', async ({ h, keys }) => {
  const vip = ENDPOINTS.find((e) => e.path.startsWith('/adm/vip/1'))!;
  const { id, key } = keys.reEnabled;
  assert.is((await call(h, vip, key)).status, 200);
  await h.keys().disable(WorkContext.unattributed, id);
  assertExactly(await call(h, vip, key), 401, INVALID, 'after disable');
  await h.keys().enable(WorkContext.unattributed, id);
  assert.is((await call(h, vip, key)).status, 200, 'after enable');
  await h.keys().revoke(WorkContext.unattributed, id);
  assertExactly(await call(h, vip, key), 401, INVALID, 'after revoke');
});

auth('a key works until its expiry and not after; moving the expiry to the future revives it', async ({ h }) => {
  const vip = ENDPOINTS.find((e) => e.path.startsWith('/adm/vip/1'))!;
  const { id, key } = await h.key(['vip:read']);
  await h.keys().changeExpiry(WorkContext.unattributed, id, new Date(Date.now() + 3_600_000).toISOString());
  assert.is((await call(h, vip, key)).status, 200, 'before expiry');
  await h.keys().changeExpiry(WorkContext.unattributed, id, new Date(Date.now() - 1000).toISOString());
  assertExactly(await call(h, vip, key), 401, INVALID, 'expired');
  await h.keys().changeExpiry(WorkContext.unattributed, id, null);
  assert.is((await call(h, vip, key)).status, 200, 'no expiry');
});

auth('a key presented with its prefix cut or with an extra character is unknown', async ({ h, keys }) => {
  const vip = ENDPOINTS.find((e) => e.path.startsWith('/adm/vip/1'))!;
  assertExactly(await call(h, vip, keys.all.slice(4)), 401, INVALID, 'without prefix');
  assertExactly(await call(h, vip, `${keys.all}x`), 401, INVALID, 'extra character');
});

auth.run();
