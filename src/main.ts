// Composition root: the only module that knows every adapter. config → store → read models →
// projections → platform → services → HTTP.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FishpiPlatform } from './community/fishpi.js';
import type { CommunityPlatform } from './community/port.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createHttpApp } from './http/app.js';
import type { HttpDeps, ReadModels } from './http/deps.js';
import { createLogger, type Logger } from './log.js';
import { createMetrics, type Metrics } from './metrics.js';
import { instrumentedPlatform } from './community/instrumented.js';
import { instrumentedStore } from './store/instrumented.js';
import { IdempotencyReadModel } from './projections/idempotency.js';
import { IdempotencyService } from './services/idempotency.js';
import { ApiKeysReadModel } from './projections/apiKeys.js';
import { ItemsReadModel, MedalsReadModel } from './projections/itemsAndMedals.js';
import { OperationsReadModel } from './projections/operations.js';
import { ProjectionRunner } from './projections/runner.js';
import { UsersReadModel } from './projections/users.js';
import { ClientsReadModel } from './projections/clients.js';
import { RecentMessagesReadModel } from './projections/recentMessages.js';
import { SessionsReadModel } from './projections/sessions.js';
import { createRealtime } from './realtime/index.js';
import { VipReadModel } from './projections/vip.js';
import { VipHistoryReadModel } from './projections/vipHistory.js';
import { PlatformOperations } from './services/platformOperations.js';
import { systemClock, type Clock } from './services/runtime.js';
import { UserSync } from './services/userSync.js';
import type { EventStore } from './store/port.js';
import { SqliteEventStore } from './store/sqlite.js';

// ../package.json from both src/ (tsx) and dist/ (the container image).
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
export const USER_AGENT = `community-bridge/${version}`;

export async function openStore(config: Config): Promise<EventStore> {
  if (config.eventStoreConnectionString) {
    // Loaded only when used: the gRPC client is heavy and most installs run embedded.
    const { EventStoreDbEventStore } = await import('./store/eventstoredb.js');
    return new EventStoreDbEventStore(config.eventStoreConnectionString);
  }
  return new SqliteEventStore({ file: join(config.dataDir, 'events.sqlite') });
}

export function createReadModels(clock: Clock = systemClock, replayMs = 600_000): ReadModels {
  const operations = new OperationsReadModel();
  const users = new UsersReadModel();
  return {
    apiKeys: new ApiKeysReadModel(),
    users,
    clients: new ClientsReadModel(),
    sessions: new SessionsReadModel(),
    recentMessages: new RecentMessagesReadModel({ users, clock, retentionMs: replayMs }),
    vip: new VipReadModel(),
    vipHistory: new VipHistoryReadModel(),
    operations,
    items: new ItemsReadModel(operations),
    medals: new MedalsReadModel(operations),
    idempotency: new IdempotencyReadModel(clock.now),
  };
}

/** Opens the store and brings every read model up to date with the log. */
export async function openCore(config: Config, clock: Clock = systemClock, metrics: Pick<Metrics, 'eventsAppended'> = createMetrics()) {
  const store = instrumentedStore(await openStore(config), metrics);
  const readModels = createReadModels(clock, config.realtime.replayMs);
  // Operations first: the items and medals models look requests up in it.
  const { operations, ...rest } = readModels;
  const runner = new ProjectionRunner(store, [operations, ...Object.values(rest)]);
  await runner.start();
  return { store, readModels, runner, clock };
}

/** A claim older than this was left by a node that died mid-request (requests end within seconds). */
const IDEMPOTENCY_STALE_MS = 60_000;

export interface RunningService {
  url: string;
  server: Server;
  deps: HttpDeps;
  close(): Promise<void>;
}

export async function startService(
  config: Config,
  overrides: { platform?: CommunityPlatform; clock?: Clock; log?: Logger } = {},
): Promise<RunningService> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const metrics = createMetrics();
  const { store, readModels, runner, clock } = await openCore(config, overrides.clock, metrics);
  const platform = instrumentedPlatform(
    overrides.platform ??
      new FishpiPlatform({ baseUrl: config.community.url, keys: config.community.keys, timeoutMs: config.community.timeoutMs, userAgent: USER_AGENT }),
    metrics,
  );
  const userSync = new UserSync({ store, platform, runner, users: readModels.users, clock });
  let publicUrl = config.publicUrl;
  const deps: HttpDeps = {
    store,
    runner,
    readModels,
    platform,
    clock,
    userSync,
    realtime: createRealtime({ config, store, runner, readModels, platform, userSync, clock, log, publicUrl: () => publicUrl! }),
    operations: new PlatformOperations({ store, runner, clock }),
    idempotency: new IdempotencyService({ store, runner, model: readModels.idempotency, clock, ttlMs: config.idempotencyTtlMs, staleMs: IDEMPOTENCY_STALE_MS }),
    metrics,
    rateLimit: config.rateLimit,
    pointsSource: config.community.pointsSource,
  };
  const app = createHttpApp(deps, log);
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  publicUrl ??= url;
  log.info({ url, store: config.eventStoreConnectionString ? 'eventstoredb' : 'sqlite', community: config.community.url }, 'listening');
  return {
    url,
    server,
    deps,
    /**
     * Stops accepting, lets in-flight requests finish (up to the shutdown timeout less a margin
     * for flushing), then closes what is left, flushes the store and releases the platform.
     */
    async close() {
      // Realtime streams never finish on their own: end them (and record the disconnects) first.
      await deps.realtime.hub.stop();
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, config.shutdownTimeoutMs - 1500))));
      await Promise.race([drained, deadline]);
      clearTimeout(timer);
      server.closeAllConnections();
      await runner.stop();
      await store.close();
      platform.close();
    },
  };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const service = await startService(config);
  const stop = () => {
    // A close that hangs must not keep an orchestrator waiting past the promised deadline.
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    void service.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
