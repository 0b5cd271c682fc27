// The set of read models the service keeps, and the order the runner applies them in.
import type { Clock } from '../system/clock.js';
import { ApiKeysReadModel } from './apiKeys.js';
import { ClientsReadModel } from './clients.js';
import { DisposableStreamsReadModel } from './disposableStreams.js';
import { IdempotencyReadModel } from './idempotency.js';
import { ItemsReadModel, MedalsReadModel } from './itemsAndMedals.js';
import { OperationsReadModel } from './operations.js';
import { RecentMessagesReadModel } from './recentMessages.js';
import type { Projection } from './runner.js';
import { SessionsReadModel } from './sessions.js';
import { UsersReadModel } from './users.js';
import { VipReadModel } from './vip.js';
import { WebhooksReadModel } from './webhooks.js';

export interface ReadModels {
  apiKeys: ApiKeysReadModel;
  users: UsersReadModel;
  vip: VipReadModel;
  operations: OperationsReadModel;
  items: ItemsReadModel;
  medals: MedalsReadModel;
  clients: ClientsReadModel;
  sessions: SessionsReadModel;
  recentMessages: RecentMessagesReadModel;
  idempotency: IdempotencyReadModel;
  disposableStreams: DisposableStreamsReadModel;
  /** Webhook endpoints and the deliveries still to make (after users and clients: events carry profiles, pushes who got them). */
  webhooks: WebhooksReadModel;
}

export interface ReadModelOptions {
  /** How long recent messages are kept for replay to reconnecting clients. */
  replayMs: number;
  /** Bytes of pushed data the replay buffer holds at most (REALTIME_REPLAY_MAX_BYTES). */
  replayMaxBytes?: number;
  /** An Idempotency-Key's life after its request ended, plus the longest a request can run. */
  keyReachMs: number;
}

export function createReadModels(clock: Clock, { replayMs, replayMaxBytes, keyReachMs }: ReadModelOptions): ReadModels {
  const [items, medals] = [new ItemsReadModel(), new MedalsReadModel()];
  const users = new UsersReadModel();
  const clients = new ClientsReadModel();
  return {
    apiKeys: new ApiKeysReadModel(),
    users,
    clients,
    sessions: new SessionsReadModel(clock.now),
    recentMessages: new RecentMessagesReadModel({ users, clock, retentionMs: replayMs, ...(replayMaxBytes !== undefined && { maxBytes: replayMaxBytes }) }),
    vip: new VipReadModel(),
    operations: new OperationsReadModel({ now: clock.now, keyReachMs }, [items, medals]),
    items,
    medals,
    idempotency: new IdempotencyReadModel(clock.now),
    disposableStreams: new DisposableStreamsReadModel(),
    webhooks: new WebhooksReadModel(users, clients),
  };
}

/** The projections the runner feeds; items and medals are fed by the operations read model. */
export function inApplyOrder(readModels: ReadModels): Projection[] {
  const { items: _items, medals: _medals, ...projections } = readModels;
  return Object.values(projections);
}
