// docs/architecture.md "one write path": two nodes share one store (here one SQLite file). A sign-in,
// a push or a logout handled by node B reaches the connection node A holds, because delivery
// follows the store's subscription and never the handler that wrote.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import type { PushAnswer } from '../../src/contract/answers.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/main.js';
import type { RecordedEvent } from '../../src/store/port.js';
import { ALICE, startHarness } from '../support/harness.js';
import { applied, connect, signIn } from '../support/streamsAndSignIn.js';

async function twoNodes() {
  const a = await startHarness();
  // Keys first, so node B has them once it has caught up with the log.
  const { key } = await a.key(['*']);
  const b = await startService(loadConfig({ PORT: '0', DATA_DIR: a.dataDir, COMMUNITY_URL: a.simUrl, COMMUNITY_KEY: SIMULATOR_KEY, LOG_LEVEL: 'silent', NODE_ID: 'node-b' }));
  const nodeB = { url: b.url, service: b };
  return {
    a,
    b: nodeB,
    key,
    async close() {
      await b.close();
      await a.close();
    },
  };
}

const about = (clientId: string, type: string) => (e: RecordedEvent) => e.type === type && (e.data as { clientId: string }).clientId === clientId;

/** `/adm/user/get`'s answer, as far as these tests read it: a known client, signed in or not (a 404 has `data: {}`). */
type UserGetBody = { data: { authenticated?: boolean; user?: { oId: string } } };

async function lookup(node: { url: string }, key: string, clientId: string) {
  const res = await fetch(`${node.url}/adm/user/get?client_id=${clientId}`, { headers: { apiKey: key } });
  return { status: res.status, body: (await res.json()) as UserGetBody };
}

test('a sign-in served by node B reaches the connection on node A; both nodes then know who it is', async () => {
  const { a, b, key, close } = await twoNodes();
  try {
    const { stream, clientId } = await connect(a);
    const seenByA = applied(a, about(clientId, 'ClientSignedIn'));
    await signIn(b, clientId, ALICE.oId); // login page and callback on B
    const login = await stream.next('login');
    assert.is(login.data.user.oId, ALICE.oId);
    assert.is((await lookup(b, key, clientId)).body.data.authenticated, true);
    await seenByA;
    assert.is((await lookup(a, key, clientId)).body.data.user!.oId, ALICE.oId);
    stream.close();
  } finally {
    await close();
  }
});

test("a push accepted by node B is delivered by node A; a logout on B closes A's connection; a cookie from B works on A", async () => {
  const { a, b, key, close } = await twoNodes();
  try {
    const popup = await connect(a);
    const cookie = await signIn(b, popup.clientId, ALICE.oId);
    await popup.stream.next('login');
    const tab = await connect(a, { cookie }); // the cookie B set, on A: same secret, same log
    assert.is(tab.hello.data.login_status, true);

    const res = await fetch(`${b.url}/adm/message/push`, {
      method: 'POST',
      headers: { apiKey: key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ oIds: [ALICE.oId], name: 'from-b', data: { ok: true } }),
    });
    assert.is(res.status, 200);
    for (const s of [popup.stream, tab.stream]) assert.equal((await s.next('message')).data, { app_id: 'game-one', name: 'from-b', data: { ok: true } });

    const logout = await fetch(`${b.url}/api/logout`, { method: 'POST', headers: { Cookie: cookie } });
    assert.is(logout.status, 200);
    await popup.stream.ended();
    await tab.stream.ended();
    popup.stream.close();
    tab.stream.close();
  } finally {
    await close();
  }
});

test('a push accepted by node A reports online a user whose connection node B holds, and offline once it closed', async () => {
  const { a, b, key, close } = await twoNodes();
  try {
    const { stream, clientId } = await connect(b);
    const signedInOnA = applied(a, about(clientId, 'ClientSignedIn'));
    await signIn(b, clientId, ALICE.oId);
    await stream.next('login');
    await signedInOnA;
    const push = () =>
      fetch(`${a.url}/adm/message/push`, {
        method: 'POST',
        headers: { apiKey: key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ oIds: [ALICE.oId], name: 'from-a', data: {} }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as v.InferOutput<typeof PushAnswer> }));
    assert.equal(await push(), { status: 200, body: { code: 0, msg: 'success', data: { online: [ALICE.oId], offline: [], unknown: [] } } });
    assert.is((await stream.next('message')).data.name, 'from-a');

    const goneOnA = applied(a, about(clientId, 'ClientDisconnected'));
    stream.close();
    await goneOnA;
    assert.equal((await push()).body.data, { online: [], offline: [ALICE.oId], unknown: [] });
  } finally {
    await close();
  }
});

test('a connection closed on node A is gone for node B too (404)', async () => {
  const { a, b, key, close } = await twoNodes();
  try {
    const { stream, clientId } = await connect(a);
    // B finds a client A connected a moment ago, even before B has applied the event.
    assert.is((await lookup(b, key, clientId)).body.data.authenticated, false);
    const goneOnB = applied(b, about(clientId, 'ClientDisconnected'));
    stream.close();
    await goneOnB;
    const res = await lookup(b, key, clientId);
    assert.is(res.status, 404);
    assert.equal(res.body, { data: {}, message: 'Client not found or disconnected.', status: 404 });
  } finally {
    await close();
  }
});

test.run();
