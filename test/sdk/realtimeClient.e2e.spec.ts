// The SDK's realtime client outside a browser, with an EventSource passed in (the `eventsource`
// package): typed frames, the client id, and close() ending the connection.
import { connectRealtime, createAdminClient, type PbConnectFrame } from '@community-bridge/sdk';
import { EventSource } from 'eventsource';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startHarness } from '../support/harness.js';
import { applied, withTimeout } from '../support/streamsAndSignIn.js';

test('an injected EventSource: PB_CONNECT gives the client id, close() disconnects it', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['user:get']);
    const admin = createAdminClient({ baseUrl: h.url, apiKey: key });
    let connected!: (frame: PbConnectFrame) => void;
    const hello = new Promise<PbConnectFrame>((resolve) => (connected = resolve));
    const realtime = connectRealtime({ baseUrl: h.url, withCredentials: false, EventSource, onConnect: (frame) => connected(frame) });
    assert.is(realtime.clientId, undefined, 'no client before PB_CONNECT');
    assert.throws(() => realtime.signIn(), /Not connected yet/);
    const frame = await withTimeout(hello, 5000, 'PB_CONNECT');
    assert.equal(frame, { client_id: realtime.clientId, login_status: false });
    assert.is(realtime.user, undefined);
    assert.equal((await admin.user.get(frame.client_id))?.data, { authenticated: false, clientId: frame.client_id });

    const gone = applied(h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === frame.client_id);
    realtime.close();
    await gone;
    assert.is(await admin.user.get(frame.client_id), null);
  } finally {
    await h.close();
  }
});

test.run();
