// docs/api.md "GET /api/realtime": the stream, its first frame, its headers, its heartbeat, CORS, and what closing
// it leaves behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, startHarness } from '../support/harness.js';
import { applied, connect, openStream, signIn, visit, withTimeout } from '../support/streamsAndSignIn.js';

const CLIENT_ID = /^[A-Za-z0-9_-]{30,}$/;

test('a new connection gets PB_CONNECT first: a fresh client id, not signed in, the log position as id', async () => {
  const h = await startHarness();
  try {
    const { stream, hello, clientId } = await connect(h);
    assert.equal(Object.keys(hello.data).sort(), ['client_id', 'login_status']);
    assert.is(hello.data.login_status, false);
    assert.match(clientId, CLIENT_ID);
    assert.match(hello.id, /^\d+$/);
    assert.ok(Number(hello.id) <= h.service.deps.runner.position);
    const { status, headers } = await stream.response;
    assert.is(status, 200);
    assert.match(headers.get('content-type')!, /^text\/event-stream/);
    assert.is(headers.get('cache-control'), 'no-cache');
    assert.is(headers.get('x-accel-buffering'), 'no');
    assert.is(headers.get('connection'), 'keep-alive');
    // Durable before the browser knew its id: the event is in the log.
    const connected = await h.events(`client-${clientId}`);
    assert.equal(
      connected.map((e) => e.type),
      ['ClientConnected'],
    );

    const other = await connect(h);
    assert.is.not(other.clientId, clientId);
    stream.close();
    other.stream.close();
  } finally {
    await h.close();
  }
});

test('closing the connection records ClientDisconnected and the client is gone', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    const { key } = await h.key(['user:get']);
    assert.is((await h.get(`/adm/user/get?client_id=${clientId}`, key)).status, 200);
    const gone = applied(h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === clientId);
    stream.close();
    const event = await gone;
    assert.is((event.data as { reason: string }).reason, 'closed');
    assert.is(h.service.deps.realtime.hub.size, 0);
    const res = await h.get(`/adm/user/get?client_id=${clientId}`, key);
    assert.is(res.status, 404);
    assert.equal(res.body, { data: {}, message: 'Client not found or disconnected.', status: 404 });
    // Its login page now says so.
    const login = await visit(`${h.url}/fishpi/login?client_id=${clientId}`);
    assert.is(login.status, 404);
  } finally {
    await h.close();
  }
});

test('a heartbeat comment frame arrives at the configured interval', async () => {
  const h = await startHarness({ env: { REALTIME_HEARTBEAT_MS: '40' } });
  const abort = new AbortController();
  try {
    const res = await fetch(`${h.url}/api/realtime`, { signal: abort.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    await withTimeout(
      (async () => {
        while (!/\n: heartbeat\n\n[\s\S]*: heartbeat\n\n/.test(text)) {
          const { value, done } = await reader.read();
          if (done) throw new Error('stream ended');
          text += decoder.decode(value, { stream: true });
        }
      })(),
      5000,
      'two heartbeats',
    );
    // PB_CONNECT came first, framed with id, event and a one-line JSON data.
    assert.match(text, /^id: \d+\nevent: PB_CONNECT\ndata: \{"client_id":"[A-Za-z0-9_-]{30,}","login_status":false\}\n\n/);
  } finally {
    abort.abort();
    await h.close();
  }
});

test('a heartbeat goes only to streams silent for a whole interval: one carrying pushes gets none', async () => {
  const h = await startHarness({ env: { REALTIME_HEARTBEAT_MS: '400' } });
  const abort = new AbortController();
  try {
    const { stream, clientId } = await connect(h);
    const cookie = await signIn(h, clientId, ALICE.oId);
    stream.close();
    const comments = (headers: Record<string, string>) => {
      const counted = { heartbeats: 0, text: '' };
      void (async () => {
        const res = await fetch(`${h.url}/api/realtime`, { signal: abort.signal, headers });
        const decoder = new TextDecoder();
        for await (const chunk of res.body!) {
          counted.text += decoder.decode(chunk, { stream: true });
          counted.heartbeats = counted.text.split(': heartbeat\n\n').length - 1;
        }
      })().catch(() => undefined); // aborted at the end of the test
      return counted;
    };
    const idle = comments({});
    const busy = comments({ Cookie: cookie });
    const { key } = await h.key(['message:push']);
    // Pushes one after another until the idle stream has had three heartbeats.
    let i = 0;
    await eventually(
      async () => {
        await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'tick', data: { i: i++ } }, key);
        return idle.heartbeats >= 3;
      },
      { what: () => `the idle stream to get 3 heartbeats (it has ${idle.heartbeats}) while the other carries pushes` },
    );
    assert.match(busy.text, /event: message\ndata: \{"app_id":"[^"]+","name":"tick"/);
    assert.is(busy.heartbeats, 0, 'a stream that carried a frame within every interval');
  } finally {
    abort.abort();
    await h.close();
  }
});

test('closing the service ends open streams cleanly and records their disconnects', async () => {
  const h = await startHarness();
  const { stream, clientId } = await connect(h);
  const disconnected = applied(h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === clientId);
  await withTimeout(h.close(), 5000, 'the harness closed');
  await stream.ended();
  stream.close();
  assert.is(((await disconnected).data as { reason: string }).reason, 'shutdown');
});

test('CORS: a listed origin may connect with credentials; others get no CORS headers; preflight is answered', async () => {
  const h = await startHarness({ env: { CORS_ORIGINS: 'https://game.example, https://other.example' } });
  try {
    const allowed = openStream(`${h.url}/api/realtime`, { headers: { Origin: 'https://game.example' } });
    await allowed.next('PB_CONNECT');
    const { headers } = await allowed.response;
    assert.is(headers.get('access-control-allow-origin'), 'https://game.example');
    assert.is(headers.get('access-control-allow-credentials'), 'true');
    assert.match(headers.get('vary') ?? '', /Origin/);
    allowed.close();

    const denied = openStream(`${h.url}/api/realtime`, { headers: { Origin: 'https://evil.example' } });
    await denied.next('PB_CONNECT');
    assert.is((await denied.response).headers.get('access-control-allow-origin'), null);
    denied.close();

    for (const path of ['/api/realtime', '/api/logout']) {
      const preflight = await h.request('OPTIONS', path, {
        headers: { Origin: 'https://other.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
      });
      assert.is(preflight.status, 204);
      assert.is(preflight.headers.get('access-control-allow-origin'), 'https://other.example');
      assert.is(preflight.headers.get('access-control-allow-credentials'), 'true');
      assert.match(preflight.headers.get('access-control-allow-methods')!, /POST/);
      assert.match(preflight.headers.get('access-control-allow-headers')!, /Last-Event-ID/);
    }
    const logout = await h.request('POST', '/api/logout', { headers: { Origin: 'https://game.example' } });
    assert.is(logout.headers.get('access-control-allow-origin'), 'https://game.example');
  } finally {
    await h.close();
  }
});

test.run();
