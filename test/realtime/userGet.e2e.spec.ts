// docs/api.md: GET /adm/user/get?client_id= — exactly the three outcomes, behind `user:get`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { applied, connect, signIn } from '../support/streamsAndSignIn.js';

test('unknown client: HTTP 404 with the spec body exactly', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['user:get']);
    for (const id of ['nope', 'A'.repeat(32), 'x'.repeat(128)]) {
      const res = await h.get(`/adm/user/get?client_id=${id}`, key);
      assert.is(res.status, 404);
      assert.is(res.text, '{"data":{},"message":"Client not found or disconnected.","status":404}');
    }
  } finally {
    await h.close();
  }
});

test('connected, not signed in: authenticated false', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['user:get']);
    const { stream, clientId } = await connect(h);
    const res = await h.get(`/adm/user/get?client_id=${clientId}`, key);
    assert.is(res.status, 200);
    assert.equal(res.body, { code: 0, msg: 'success', data: { authenticated: false, clientId } });
    stream.close();
  } finally {
    await h.close();
  }
});

test('signed in: authenticated true with only avatar, name, nickname and oId; 404 once it disconnects', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['user:get']);
    const { stream, clientId } = await connect(h);
    await signIn(h, clientId, ALICE.oId);
    const res = await h.get(`/adm/user/get?client_id=${clientId}`, key);
    assert.is(res.status, 200);
    assert.equal(res.body, {
      code: 0,
      msg: 'success',
      data: { authenticated: true, clientId, user: { avatar: ALICE.avatar, name: ALICE.userName, nickname: ALICE.nickname, oId: ALICE.oId } },
    });
    const gone = applied(h, (e) => e.type === 'ClientDisconnected');
    stream.close();
    await gone;
    const after = await h.get(`/adm/user/get?client_id=${clientId}`, key);
    assert.is(after.status, 404);
    assert.equal(after.body, { data: {}, message: 'Client not found or disconnected.', status: 404 });
  } finally {
    await h.close();
  }
});

test('authentication: no or unknown key 401, a key without user:get 403, `*` allowed', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const path = `/adm/user/get?client_id=${clientId}`;
    const missing = await h.get(path);
    assert.is(missing.status, 401);
    assert.equal(missing.body, { code: 401, message: 'Invalid apiKey', data: {} });
    assert.is((await h.get(path, 'cbk_not-a-key')).status, 401);
    const { key: pushOnly } = await h.key(['message:push']);
    const denied = await h.get(path, pushOnly);
    assert.is(denied.status, 403);
    assert.equal(denied.body, { code: 403, message: 'No permission to access this resource', data: {} });
    const { key: all } = await h.key(['*']);
    assert.is((await h.get(path, all)).status, 200);
    stream.close();
  } finally {
    await h.close();
  }
});

test('a missing or empty client_id is a 400 in the service error form', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['user:get']);
    for (const query of ['', '?client_id=', '?client_id=%20%20', '?client_id=a&client_id=b']) {
      const res = await h.get(`/adm/user/get${query}`, key);
      assert.is(res.status, 400, query);
      assert.is(res.body.code, 400);
      assert.match(res.body.message, /^client_id: /);
    }
  } finally {
    await h.close();
  }
});

test("clients a crashed run of this node left connected answer 404 after it starts again; other nodes' clients stay", async () => {
  const h = await startHarness({ env: { NODE_ID: 'node-a' } });
  try {
    const { key } = await h.key(['user:get']);
    const { store } = h.service.deps;
    // What a process killed mid-connection leaves in the log: connected, never disconnected.
    const connected = (clientId: string, node: string) =>
      store.append(`client-${clientId}`, [{ type: 'ClientConnected', data: { clientId, node, at: new Date().toISOString() } }], { expectedRevision: 'no_stream' });
    await connected('left-by-a-crash-000', 'node-a');
    const { position } = await connected('held-by-node-b-0000', 'node-b');
    await h.service.deps.runner.waitFor(position);
    assert.is((await h.get('/adm/user/get?client_id=left-by-a-crash-000', key)).status, 200, 'stale before the restart');

    await h.restart();
    assert.is((await h.get('/adm/user/get?client_id=left-by-a-crash-000', key)).status, 404);
    assert.is((await h.get('/adm/user/get?client_id=held-by-node-b-0000', key)).status, 200);
    const closed = (await h.events('client-left-by-a-crash-000')).at(-1)!;
    assert.is(closed.type, 'ClientDisconnected');
    assert.is((closed.data as { reason: string }).reason, 'restart');
  } finally {
    await h.close();
  }
});

test.run();
