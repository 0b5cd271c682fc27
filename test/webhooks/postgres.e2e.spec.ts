// Webhooks with two nodes on PostgreSQL (a throwaway cluster) and a real receiver on loopback: the
// least NODE_ID sends each event once, whichever node the user signed in on; when that node shuts
// down while the receiver holds its request, the other node sends the event again, and every
// arrival has its attempt record in PostgreSQL's log.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { WebhookAttemptFinished, WebhookAttemptStarted } from '../../src/domain/events.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { testsOnCluster, type PostgresCluster } from '../support/postgres.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { startWebhookReceiver, verifySignature } from '../support/webhookReceiver.js';

const test = suite<{ cluster: PostgresCluster }>('webhooks on PostgreSQL, two nodes');

async function node(connectionString: string, nodeId: string): Promise<Harness> {
  return startHarness({
    env: {
      EVENTSTORE_CONNECTION_STRING: connectionString,
      NODE_ID: nodeId,
      NODE_HEARTBEAT_MS: '200',
      // Nodes sharing a store share the session secret: each opens the endpoints' sealed secrets.
      SESSION_SECRET: 'a session secret shared by both nodes of this test',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_TIMEOUT_MS: '60000',
    },
  });
}

const TESTS: Record<string, (ctx: { cluster: PostgresCluster }) => Promise<void>> = {
  'the least NODE_ID sends; when it shuts down mid-attempt the other sends the event again, once per attempt record': async ({ cluster }) => {
    const connectionString = await cluster.connectionStringFor('webhooks');
    const a = await node(connectionString, 'pg-a');
    const b = await node(connectionString, 'pg-b');
    const receiver = await startWebhookReceiver();
    const streams: Array<{ close(): void }> = [];
    let aClosed = false;
    try {
      const { key } = await b.key(['webhooks:manage'], 'game-one');
      const registered = await b.post('/adm/webhooks', { url: receiver.url, events: ['client.signed_in'] }, key);
      assert.is(registered.status, 200, registered.text);
      const { endpoint, secret } = registered.body.data;
      const signInOn = async (h: Harness, oId: string) => {
        const client = await connect(h);
        streams.push(client.stream);
        await signIn(h, client.clientId, oId);
        return eventually(() => receiver.arrivals.find((x) => x.event.data.clientId === client.clientId), { what: 'the sign-in at the receiver', timeoutMs: 20_000 });
      };
      const attemptsOf = async (eventId: string) => {
        const events = await b.events(`webhookdelivery-${endpoint.id}-${eventId.slice(4)}`);
        return {
          started: events.filter((e) => e.type === 'WebhookAttemptStarted').map((e) => (e.data as WebhookAttemptStarted['data']).node),
          delivered: events.filter((e) => e.type === 'WebhookAttemptFinished' && (e.data as WebhookAttemptFinished['data']).delivered).length,
        };
      };

      for (const [h, oId] of [
        [a, ALICE.oId],
        [b, BOB.oId],
      ] as const) {
        const arrival = await signInOn(h, oId);
        assert.ok((await verifySignature(arrival.headers['bridge-signature'], arrival.raw, secret)) !== undefined, 'signed with the secret (opened by the sending node)');
        const recorded = await eventually(async () => {
          const found = await attemptsOf(arrival.event.id);
          return found.delivered === 1 && found;
        }, 'the delivery recorded');
        assert.equal(recorded.started, ['pg-a'], 'sent by the least NODE_ID');
        assert.is(receiver.of(arrival.event.id).length, 1);
      }

      receiver.script({ hold: true });
      const held = await signInOn(b, ALICE.oId);
      await a.close();
      aClosed = true;
      await eventually(async () => (await attemptsOf(held.event.id)).delivered === 1, { what: 'the delivery made by the other node', timeoutMs: 20_000 });
      const { started } = await attemptsOf(held.event.id);
      assert.equal(started, ['pg-a', 'pg-b']);
      assert.is(receiver.of(held.event.id).length, started.length, 'one arrival per attempt record');
      assert.ok(receiver.of(held.event.id).every((x) => x.raw === held.raw));
    } finally {
      for (const stream of streams) stream.close();
      if (!aClosed) await a.close();
      await b.close();
      await receiver.close();
    }
  },
};

await testsOnCluster(test, 'webhooks on PostgreSQL', TESTS);
test.run();
