import type { ReadModels } from '../projections/readModels.js';
import type { GoldFingerKeys } from '../community/goldFinger.js';
import type { CommunityPlatform } from '../community/port.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { RealtimeDeps } from '../realtime/deps.js';
import type { Metrics } from '../metrics.js';
import type { IdempotencyService } from '../services/idempotency.js';
import type { RateLimit } from './middleware/rateLimit.js';
import type { PlatformOperations } from '../services/platformOperations.js';
import type { OperationOutcomes } from '../services/operationOutcomes.js';
import type { Clock } from '../system/clock.js';
import type { ClockReading, NodeLiveness } from '../services/logClock.js';
import type { UserSync } from '../services/userSync.js';
import type { EventStore } from '../store/port.js';
import type { StoreWriteHealth } from '../services/storeHealth.js';
import type { PushLimits } from '../domain/jsonBounds.js';
import type { ApiSettings } from './route.js';
import type { SignInPageRates } from './signInPageGate.js';
import type { RealtimeConnectRates } from './realtimeConnectGate.js';
import type { ClientAddressing } from './clientAddress.js';
import type { WebhookService } from '../services/webhooks.js';
import type { PresenceQueries } from '../projections/presence.js';

export type { ReadModels };

/** Everything the HTTP layer uses, built once by the composition root (src/main.ts). */
export interface HttpDeps {
  /** NODE_ID: what this node's requests append names it. */
  nodeId: string;
  store: EventStore;
  runner: ProjectionRunner;
  readModels: ReadModels;
  platform: CommunityPlatform;
  userSync: UserSync;
  idempotency: IdempotencyService;
  metrics: Metrics;
  /** Whether the event store takes appends (/readyz). */
  storeHealth: StoreWriteHealth;
  /** undefined: no rate limit. */
  rateLimit: RateLimit | undefined;
  /** The platform's admin keys this service holds (a route whose key is missing answers 503). */
  platformKeys: GoldFingerKeys;
  /** Send the platform's source fields (sourceAppId, requestId, …) with points edits. */
  pointsSource: boolean;
  operations: PlatformOperations;
  /** Unknown outcomes: closing them out and resolving them. */
  outcomes: OperationOutcomes;
  clock: Clock;
  /** What this node knows of its clock's offset from the log's, and of the live nodes. */
  clockReading(): ClockReading;
  /** Every node process as the store's heartbeats show it now (live, lapsed, gone). */
  liveness(): Promise<NodeLiveness[]>;
  /** Realtime clients, sessions and sign-in. */
  realtime: RealtimeDeps;
  /** Bounds of a push's `data` (PUSH_MAX_DEPTH, PUSH_MAX_BYTES); the depth bounds every body. */
  pushLimits: PushLimits;
  /** Where the client address comes from (TRUST_PROXY) and how IPv6 addresses are grouped. */
  addressing: ClientAddressing;
  /** Bounds of sign-in pages per client address and per node (SIGN_IN_PAGES_*). */
  signInPageRates: SignInPageRates;
  /** Bounds of realtime connects per client address and per node (REALTIME_CONNECTS_*). */
  realtimeConnectRates: RealtimeConnectRates;
  /** What the API says about itself: limits, lifetimes, where it lives. */
  api: ApiSettings;
  /** Apps' webhook endpoints: registration, secrets, attempts, resends. */
  webhooks: WebhookService;
  /** Who is online now: signed-in clients held by live nodes. */
  presence: PresenceQueries;
}
