// What the webhooks suites share: a service with loopback receivers allowed and quick retries, a
// key of app game-one, receivers on loopback started on demand, registering endpoints and signing
// clients in; everything closed at the end.
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { WebhookCreated } from '../../src/contract/answers.js';
import type { Grant } from '../../src/domain/permissions.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

export interface WebhookWorld {
  h: Harness;
  /** A key of app game-one with the permissions asked for. */
  key: string;
  /** A new receiver, closed with the world. */
  receiver(): Promise<WebhookReceiver>;
  /** Registers an endpoint (by default game-one's) for these event types. */
  register(url: string, events?: string[], key?: string): Promise<{ id: string; secret: string }>;
  /** A client of `oId` signed in; its stream stays open until closed (or the world closes). */
  signedInClient(oId?: string): Promise<{ clientId: string; stream: { close(): void } }>;
  close(): Promise<void>;
}

export async function openWebhookWorld(permissions: Grant[]): Promise<WebhookWorld> {
  // Loopback receivers are allowed here; retries come quickly so a suite does not wait minutes.
  const h = await startHarness({ env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_FIRST_MS: '40' } });
  const { key } = await h.key(permissions, 'game-one');
  const receivers: WebhookReceiver[] = [];
  const streams: Array<{ close(): void }> = [];
  return {
    h,
    key,
    async receiver() {
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      return receiver;
    },
    async register(url, events = ['client.signed_in', 'client.disconnected'], apiKey = key) {
      const res = await h.post<v.InferOutput<typeof WebhookCreated>>('/adm/webhooks', { url, events }, apiKey);
      assert.is(res.status, 200, res.text);
      return { id: res.body.data.endpoint.id, secret: res.body.data.secret! };
    },
    async signedInClient(oId = ALICE.oId) {
      const client = await connect(h);
      streams.push(client.stream);
      await signIn(h, client.clientId, oId);
      return client;
    },
    async close() {
      for (const stream of streams) stream.close();
      await h.close();
      await Promise.all(receivers.map((r) => r.close()));
    },
  };
}
