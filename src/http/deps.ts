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
import type { ClockReading } from '../services/logClock.js';
import type { UserSync } from '../services/userSync.js';
import type { EventStore } from '../store/port.js';
import type { StoreWriteHealth } from '../services/storeHealth.js';
import type { PushLimits } from '../domain/jsonBounds.js';
import type { ApiSettings } from './route.js';
import type { SignInPageRates } from './signInPageGate.js';
import type { WebhookService } from '../services/webhooks.js';

export type { ReadModels };

/** Everything the HTTP layer uses, built once by the composition root (src/main.ts). */
export interface HttpDeps {
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
  /** Realtime clients, sessions and sign-in. */
  realtime: RealtimeDeps;
  /** Bounds of a push's `data` (PUSH_MAX_DEPTH, PUSH_MAX_BYTES); the depth bounds every body. */
  pushLimits: PushLimits;
  /** X-Forwarded-For names the client address (TRUST_PROXY). */
  trustProxy: boolean;
  /** Bounds of sign-in pages per client address and per node (SIGN_IN_PAGES_*). */
  signInPageRates: SignInPageRates;
  /** What the API says about itself: limits, lifetimes, where it lives. */
  api: ApiSettings;
  /** Apps' webhook endpoints: registration, secrets, attempts, resends. */
  webhooks: WebhookService;
}
