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
import { ApiKeysReadModel } from './projections/apiKeys.js';
import { ItemsReadModel, MedalsReadModel } from './projections/itemsAndMedals.js';
import { OperationsReadModel } from './projections/operations.js';
import { ProjectionRunner } from './projections/runner.js';
import { UsersReadModel } from './projections/users.js';
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

export function createReadModels(): ReadModels {
  const operations = new OperationsReadModel();
  return {
    apiKeys: new ApiKeysReadModel(),
    users: new UsersReadModel(),
    vip: new VipReadModel(),
    vipHistory: new VipHistoryReadModel(),
    operations,
    items: new ItemsReadModel(operations),
    medals: new MedalsReadModel(operations),
  };
}

/** Opens the store and brings every read model up to date with the log. */
export async function openCore(config: Config, clock: Clock = systemClock) {
  const store = await openStore(config);
  const readModels = createReadModels();
  // Operations first: the items and medals models look requests up in it.
  const { operations, ...rest } = readModels;
  const runner = new ProjectionRunner(store, [operations, ...Object.values(rest)]);
  await runner.start();
  return { store, readModels, runner, clock };
}

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
  const { store, readModels, runner, clock } = await openCore(config, overrides.clock);
  const platform =
    overrides.platform ??
    new FishpiPlatform({ baseUrl: config.community.url, keys: config.community.keys, timeoutMs: config.community.timeoutMs, userAgent: USER_AGENT });
  const deps: HttpDeps = {
    store,
    runner,
    readModels,
    platform,
    clock,
    userSync: new UserSync({ store, platform, runner, users: readModels.users, clock }),
    operations: new PlatformOperations({ store, runner, clock }),
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
  log.info({ url, store: config.eventStoreConnectionString ? 'eventstoredb' : 'sqlite', community: config.community.url }, 'listening');
  return {
    url,
    server,
    deps,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
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
  const stop = () => void service.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
