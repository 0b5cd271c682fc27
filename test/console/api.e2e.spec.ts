// The console's JSON API against a real service and the platform simulator: keys recorded with
// the operator as `by`, users and their history, unknown outcomes resolved, the event log paged,
// filtered and followed, the overview. Bad input is a 400 naming the field.
import { utimes } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, BOB, type Harness, withHarness } from '../support/harness.js';
import { failAppendsOf } from '../support/appendFaults.js';
import { consoleGet, consolePost, signInOperator, withLiveReload, type Operator } from './operatorSignIn.js';
import { eventually } from '../support/eventually.js';

const ON = { CONSOLE_ADMINS: ALICE.oId, NODE_ID: 'node-a' };
const BY = { kind: 'operator', name: `console:${ALICE.oId}` };

async function createKey(h: Harness, operator: Operator, permissions: string[]) {
  const res = await consolePost(h, operator, '/console/api/keys', { appId: 'console-game', app: 'Console Game', permissions });
  assert.is(res.status, 200, res.text);
  return res.body as { key: { id: string; status: string; lastUsed: string | null }; secret: string };
}

test('a key created in the console works against /adm/, shows its last use, and is disabled, enabled and revoked with the operator recorded', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const { key, secret } = await createKey(h, operator, ['vip:read', 'vip:write']);
    assert.match(secret, /^cbk_/);
    assert.equal([key.status, key.lastUsed], ['enabled', null]);
    const submit = await h.post('/adm/vip/submit', { oId: BOB.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, secret);
    assert.is(submit.status, 200, submit.text);
    const listed = await eventually(async () => {
      const found = (await consoleGet(h, operator, '/console/api/keys')).body.keys.find((k: { id: string }) => k.id === key.id);
      return found.lastUsed ? found : undefined;
    }, 'the key shows its last use');
    assert.equal([listed.app, listed.appId, listed.allApps], ['Console Game', 'console-game', false]);
    assert.not.ok('secret' in listed || JSON.stringify(listed).includes(secret), 'the secret is shown once');
    for (const [action, status] of [
      ['disable', 'disabled'],
      ['enable', 'enabled'],
      ['revoke', 'revoked'],
    ] as const) {
      const res = await consolePost(h, operator, `/console/api/keys/${key.id}/${action}`);
      assert.is(res.body.status, status, res.text);
    }
    assert.is((await h.get(`/adm/vip/${BOB.oId}`, secret)).status, 401, 'a revoked key opens nothing');
    const events = await h.events(`apikey-${key.id}`);
    assert.equal(
      events.map((e) => e.type),
      ['ApiKeyIssued', 'ApiKeyDisabled', 'ApiKeyEnabled', 'ApiKeyRevoked'],
    );
    for (const event of events) assert.equal((event.data as { by: unknown }).by, BY, event.type);
    assert.is((await consolePost(h, operator, `/console/api/keys/${key.id}/enable`)).status, 409, 'revocation is final');
  }));

test('bad key input is a 400 naming the field, and records nothing', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const cases: Array<[unknown, string]> = [
      [{ app: 'x', permissions: [] }, 'permissions'],
      [{ app: 'x', permissions: ['points:fly'] }, 'permissions.0'],
      [{ app: '  ', permissions: ['*'] }, 'app'],
      [{ app: '!!!', permissions: ['*'] }, 'app'],
      [{ app: 'Game A', permissions: ['*'] }, 'app'],
      [{ appId: 'Game A', permissions: ['*'] }, 'appId'],
      [{ app: 'x', permissions: ['*'], expires: '2001-01-01 00:00:00' }, 'expires'],
      [{ app: 'x', permissions: ['*'], expires: 'tomorrow' }, 'expires'],
    ];
    for (const [body, field] of cases) {
      const res = await consolePost(h, operator, '/console/api/keys', body);
      assert.is(res.status, 400, JSON.stringify(body));
      assert.is(res.body.data.issues[0].field, field, res.text);
    }
    assert.is((await consolePost(h, operator, '/console/api/keys/nope/disable')).body.data.issues[0].field, 'keyId');
    assert.is((await h.events('apikey-')).length, 0);
  }));

const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

test('console changes are held to the API’s body bounds: too deep, too large or not JSON answers as an /adm/ route does, and records nothing', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const { key } = await h.key(['*']);
    const change = (raw: string, headers: Record<string, string> = {}) =>
      h.request('POST', '/console/api/keys', { raw, headers: { Cookie: operator.cookie, 'X-Console-Token': operator.token, Origin: new URL(h.url).origin, ...headers } });
    const edit = (raw: string, headers: Record<string, string> = {}) => h.request('POST', '/adm/points/edit', { raw, apiKey: key, headers });
    const keyBody = (extra: string) => `{"app":"x","permissions":["*"],${extra}}`;
    const editBody = (extra: string) => `{"oId":"${ALICE.oId}","point":1,"memo":"m",${extra}}`;

    const deep = `"extra":${nested(20_000)}`;
    const tooDeep = await change(keyBody(deep));
    assert.is(tooDeep.status, 400, tooDeep.text);
    assert.match(tooDeep.body.message, /^extra: must be nested at most 32 levels deep/);
    assert.equal(tooDeep.body, (await edit(editBody(deep))).body);
    assert.is(
      (await h.request('POST', '/console/api/keys', { raw: keyBody(deep), headers: { Origin: new URL(h.url).origin } })).status,
      401,
      'the session is checked before the body is read',
    );

    const over = `"extra":"${'x'.repeat(1024 * 1024)}"`;
    const tooLarge = await change(keyBody(over));
    assert.is(tooLarge.status, 413, tooLarge.text);
    assert.equal(tooLarge.body, { code: 413, message: tooLarge.body.message, data: { reason: 'payload_too_large' } });
    assert.match(tooLarge.body.message, /1 MiB/);
    assert.equal(tooLarge.body, (await edit(editBody(over))).body);
    const under = await change(`{"app":"${'x'.repeat(1024 * 1024 - 100)}","permissions":["*"]}`);
    assert.is(under.body.data?.issues?.[0]?.field, 'app', `just under 1 MiB is read and validated: ${under.text.slice(0, 200)}`);

    const text = await change(keyBody('"n":1'), { 'content-type': 'text/plain' });
    assert.is(text.status, 400, text.text);
    assert.equal(text.body, (await edit(editBody('"n":1'), { 'content-type': 'text/plain' })).body);
    assert.is((await h.events('apikey-')).length, 1, 'only the harness’s key was issued');
  }));

test('users: the newest first, or found by part of a name or an oId; a user’s page shows VIP, operations with outcomes, sessions; a test push is recorded as the console’s', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const { key } = await h.key(['*']);
    assert.is((await h.post('/adm/points/edit', { oId: BOB.oId, point: 5, memo: 'quest' }, key)).status, 200);
    await h.post('/adm/vip/submit', { oId: BOB.oId, quality: 'svip', expired: '2030-01-01 00:00:00' }, key);
    const byName = await eventually(async () => {
      const res = await consoleGet(h, operator, '/console/api/users?q=BO');
      return res.body.users.length ? res.body.users : undefined;
    }, 'bob is found');
    assert.equal(
      byName.map((u: { oId: string }) => u.oId),
      [BOB.oId],
    );
    assert.equal((await consoleGet(h, operator, `/console/api/users?q=${BOB.oId.slice(0, 6)}`)).body.users.length, 2, 'both users’ oIds start so');
    // Without a search (or a blank one): the newest users first (alice signed in as the operator first, then bob).
    assert.equal(
      (await consoleGet(h, operator, '/console/api/users')).body.users.map((u: { oId: string }) => u.oId),
      [BOB.oId, ALICE.oId],
    );
    assert.equal((await consoleGet(h, operator, '/console/api/users?q=%20')).body.users.length, 2);
    assert.is((await consoleGet(h, operator, `/console/api/users?q=${'x'.repeat(101)}`)).body.data.issues[0].field, 'q');
    const page = (await consoleGet(h, operator, `/console/api/users/${BOB.oId}`)).body;
    assert.is(page.user.name, BOB.userName);
    assert.equal(
      page.vip.map((r: { quality: string }) => r.quality),
      ['svip'],
    );
    assert.equal(
      page.operations.map((o: { kind: string; status: string }) => [o.kind, o.status]),
      [['PointsEditRequested', 'applied']],
    );
    assert.equal(page.connections, []);
    assert.is((await consoleGet(h, operator, '/console/api/users/1')).status, 404);
    const push = await consolePost(h, operator, `/console/api/users/${BOB.oId}/push`, { name: 'console-test', data: { hello: 'bob' } });
    assert.equal(push.body.online, false, push.text);
    const pushed = (await h.events('message-')).at(-1)!;
    assert.equal([pushed.type, (pushed.data as { appId: string }).appId, (pushed.data as { keyId: string }).keyId], ['MessagePushed', 'console', BY.name]);
    assert.is((await consolePost(h, operator, `/console/api/users/${BOB.oId}/push`, { name: 'x', data: [1] })).body.data.issues[0].field, 'data');
  }));

test('an unknown outcome is listed with what the log knows, and resolved once, by the operator', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const { key } = await h.key(['*']);
    const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
    const sent = await h.request('POST', '/adm/points/edit', { body: { oId: BOB.oId, point: 3, memo: 'lost answer' }, apiKey: key, headers: { 'Idempotency-Key': 'k1' } });
    undo();
    assert.is(sent.status, 504);
    await h.restart();
    const [unknown] = (await consoleGet(h, operator, '/console/api/operations/unknown')).body.operations;
    assert.equal([unknown.operationId, unknown.status, unknown.node, unknown.request], [sent.body.data.operationId, 'unknown', 'node-a', { point: 3, memo: 'lost answer' }]);
    assert.match(unknown.unknownReason, /node-a stopped/);
    assert.is((await consolePost(h, operator, `/console/api/operations/${unknown.operationId}/resolve`, { applied: 'yes' })).body.data.issues[0].field, 'applied');
    const resolved = await consolePost(h, operator, `/console/api/operations/${unknown.operationId}/resolve`, { applied: true, note: 'ledger shows it' });
    assert.is(resolved.status, 200, resolved.text);
    assert.equal([resolved.body.status, resolved.body.resolution.by, resolved.body.resolution.note], ['applied', BY, 'ledger shows it']);
    assert.equal((await consoleGet(h, operator, '/console/api/operations/unknown')).body.operations, []);
    assert.is((await consolePost(h, operator, `/console/api/operations/${unknown.operationId}/resolve`, { applied: false })).status, 409);
    const retry = await h.request('POST', '/adm/points/edit', { body: { oId: BOB.oId, point: 3, memo: 'lost answer' }, apiKey: key, headers: { 'Idempotency-Key': 'k1' } });
    assert.is(retry.status, 200, 'the key follows the resolution');
  }));

test('the event log pages by position and filters by stream, category and type; a follow stream gets new events as they are appended', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const first = await h.key(['vip:read'], 'one');
    await h.key(['vip:read'], 'two');
    const keys = (await consoleGet(h, operator, '/console/api/events?category=apikey&limit=1')).body;
    assert.equal(
      keys.items.map((e: { type: string }) => e.type),
      ['ApiKeyIssued'],
    );
    assert.is(keys.items[0].stream, `apikey-${first.id}`);
    const next = (await consoleGet(h, operator, `/console/api/events?category=apikey&limit=1&after=${keys.next}`)).body;
    assert.is(next.items[0].data.app, 'two');
    const last = (await consoleGet(h, operator, `/console/api/events?category=apikey&after=${next.items[0].position}`)).body;
    assert.equal([last.items, last.next], [[], undefined], 'nothing after the last one');
    const byStream = (await consoleGet(h, operator, `/console/api/events?stream=apikey-${first.id}`)).body.items;
    assert.is(byStream.length, 1);
    assert.ok((await consoleGet(h, operator, '/console/api/events?type=ConsoleSessionStarted')).body.items.every((e: { type: string }) => e.type === 'ConsoleSessionStarted'));
    assert.is((await consoleGet(h, operator, '/console/api/events?limit=500')).body.data.issues[0].field, 'limit');
    assert.is((await consoleGet(h, operator, '/console/api/events?after=-1')).body.data.issues[0].field, 'after');

    const controller = new AbortController();
    const follow = await fetch(`${h.url}/console/api/events/follow?category=apikey&after=${last.head}`, { headers: { Cookie: operator.cookie }, signal: controller.signal });
    assert.match(follow.headers.get('content-type')!, /^text\/event-stream/);
    const reader = follow.body!.getReader();
    const third = await h.key(['vip:read'], 'three');
    let text = '';
    while (!text.includes(`apikey-${third.id}`)) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /event: event\ndata: \{"position":\d+,"stream":"apikey-/);
    assert.not.match(text, /ConsoleSession/, 'filtered');
    controller.abort();
  }));

test('the overview: nodes, connections, outcomes per minute, platform call health, lag', () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const { key } = await h.key(['*']);
    await h.post('/adm/points/edit', { oId: BOB.oId, point: 1, memo: 'counted' }, key);
    const overview = await eventually(async () => {
      const body = (await consoleGet(h, operator, '/console/api/overview')).body;
      return body.outcomesPerMinute.some((m: { applied: number }) => m.applied > 0) ? body : undefined;
    }, 'the applied edit is counted');
    assert.is(overview.node, 'node-a');
    assert.ok(overview.nodes.some((n: { node: string }) => n.node === 'node-a'));
    assert.equal(overview.connections, { anonymous: 0, signedIn: 0 });
    assert.is(overview.outcomesPerMinute.length, 60);
    assert.ok(overview.platformCalls.ok >= 2, 'the user lookups and the edit');
    assert.ok(overview.platformCalls.byEndpoint.some((e: { endpoint: string; ok: number }) => e.endpoint === 'editPoints' && e.ok === 1));
    assert.equal(Object.keys(overview.lag), ['head', 'readModels']);
    assert.is(overview.unknownOutcomes, 0);
  }));

test('with live reload on (npm run dev), a signed-in console page reloads itself when a front-end file changes', () =>
  withLiveReload(async (h) => {
    const shell = await (await fetch(`${h.url}/console/`)).text();
    assert.match(shell, /<script type="module" src="\/console\/assets\/reload\.js"><\/script>/);
    const reload = await fetch(`${h.url}/console/assets/reload.js`);
    assert.match(await reload.text(), /EventSource\('\/console\/assets\/changes'\)/);
    assert.is((await h.request('GET', '/console/assets/changes')).status, 401, 'for a signed-in operator only');
    const operator = await signInOperator(h, ALICE.oId);
    const changes = new AbortController();
    const stream = await fetch(`${h.url}/console/assets/changes`, { headers: { Cookie: operator.cookie }, signal: changes.signal });
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let seen = decoder.decode((await reader.read()).value);
    assert.match(seen, /^: watching/);
    // Touching a source (its times, not its text) is an edit as far as the watcher can tell.
    const source = fileURLToPath(new URL('../../src/console/ui/main.tsx', import.meta.url));
    const now = new Date();
    await utimes(source, now, now);
    while (!seen.includes('event: change')) seen += decoder.decode((await reader.read()).value);
    changes.abort();
  }));

test('without live reload (npm start, the tests) there is no reload script and no change stream', () =>
  withHarness(ON, async (h) => {
    const shell = await h.get('/console/');
    assert.not.match(shell.text, /reload\.js/);
    const operator = await signInOperator(h, ALICE.oId);
    assert.is((await consoleGet(h, operator, '/console/assets/reload.js')).status, 404);
    assert.is((await consoleGet(h, operator, '/console/assets/changes')).status, 404);
    assert.match((await h.get('/console/assets/console.js')).headers.get('content-type') ?? '', /^text\/javascript/);
  }));

test.run();
