// Attack: the address an integrator gave the SDK as baseUrl answers with a redirect to another
// origin (a hijacked proxy or DNS name, a misconfigured load balancer). Following it hands the
// apiKey, and a POST's body, to whoever is there. The SDK must not follow any 3xx, on GET or POST,
// and must say so with a BridgeRedirectError naming the status and where it pointed, once (no
// retry), without the key.
import { BridgeError, BridgeRedirectError, createAdminClient, type Fetch } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedServer, wellFormedKey, type ScriptedServer } from '../sdk/scriptedServer.js';
import { rejects } from '../support/rejects.js';

const OID = '1630399136785';
const calls = {
  GET: (admin: ReturnType<typeof createAdminClient>) => admin.vip.get(OID),
  POST: (admin: ReturnType<typeof createAdminClient>) => admin.points.edit({ oId: OID, point: 1, memo: 'redirected' }),
};

/** The service's address, redirecting every request to `location(elsewhere)`; the other origin records what reaches it. */
async function withRedirect(
  status: number,
  location: (elsewhere: ScriptedServer) => string | undefined,
  run: (service: ScriptedServer, elsewhere: ScriptedServer) => Promise<void>,
) {
  const elsewhere = await startScriptedServer();
  const service = await startScriptedServer((_req, res) => {
    const target = location(elsewhere);
    res.writeHead(status, target === undefined ? {} : { Location: target }).end('moved');
  });
  try {
    await run(service, elsewhere);
  } finally {
    await Promise.all([service.close(), elsewhere.close()]);
  }
}

for (const status of [301, 302, 303, 307, 308]) {
  for (const method of ['GET', 'POST'] as const) {
    test(`${status} to another origin on a ${method}: nothing reaches it, and the call fails with BridgeRedirectError`, () =>
      withRedirect(
        status,
        (elsewhere) => `${elsewhere.url}/adm/points/edit?from=redirect`,
        async (service, elsewhere) => {
          const apiKey = wellFormedKey();
          const admin = createAdminClient({ baseUrl: service.url, apiKey });
          const redirect = await rejects(calls[method](admin), BridgeRedirectError);

          const leaked = elsewhere.received.map((r) => ({ method: r.method, apiKey: r.headers.apikey, body: r.body }));
          assert.equal(leaked, [], 'the other origin received no request: no apiKey, no body');
          assert.is(service.received.length, 1, 'a redirect is not retried');
          assert.is(service.received[0]!.headers.apikey, apiKey, 'the key went to the service’s address');
          assert.instance(redirect, BridgeError);
          assert.equal([redirect.status, redirect.reason], [status, 'redirect']);
          assert.is(redirect.requestId, service.received[0]!.headers['x-request-id'], 'the request id the call sent');
          assert.is(redirect.locationOrigin, elsewhere.url);
          assert.ok(redirect.message.includes(`HTTP ${status}`) && redirect.message.includes(elsewhere.url), redirect.message);
          assert.not.ok(redirect.message.includes('?from=redirect'), 'only the origin is named');
          assert.not.ok(`${redirect.message}\n${redirect.stack}`.includes(apiKey));
          assert.is(redirect.idempotencyKey, method === 'POST' ? service.received[0]!.headers['idempotency-key'] : undefined);
        },
      ));
  }
}

test('a redirect within the service’s own origin is not followed either', () =>
  withRedirect(
    307,
    () => '/adm/vip/elsewhere',
    async (service) => {
      const error = await rejects(calls.GET(createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey() })), BridgeRedirectError);
      assert.is(error.locationOrigin, service.url);
      assert.equal(
        service.received.map((r) => r.url),
        [`/adm/vip/${OID}`],
      );
    },
  ));

test('a 3xx with no Location, or one that is not a URL, is an error too', async () => {
  await withRedirect(
    300,
    () => undefined,
    async (service) => {
      const error = await rejects(calls.POST(createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey() })), BridgeRedirectError);
      assert.equal([error.status, error.locationOrigin], [300, undefined]);
      assert.match(error.message, /HTTP 300 with no Location/);
    },
  );
  await withRedirect(
    302,
    () => 'http://[not a host/',
    async (service) => {
      const error = await rejects(calls.GET(createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey() })), BridgeRedirectError);
      assert.equal([error.status, error.locationOrigin], [302, undefined]);
      assert.match(error.message, /HTTP 302 to a Location that is not a URL/);
    },
  );
});

test('a redirect a browser hides (an opaque answer) has no status, not 0', async () => {
  const opaque: Fetch = async () => ({ type: 'opaqueredirect', status: 0, headers: new Headers(), text: async () => '', body: null });
  const redirect = await rejects(calls.POST(createAdminClient({ baseUrl: 'http://127.0.0.1:1', apiKey: wellFormedKey(), fetch: opaque })), BridgeRedirectError);
  assert.equal([redirect.status, redirect.reason, redirect.locationOrigin], [undefined, 'redirect', undefined]);
  assert.match(redirect.message, /the browser hides where to/);
});

test.run();
