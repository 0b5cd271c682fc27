// The event-sourced core without any HTTP: the store and the read models folded from it. The
// service (src/main.ts) and the operator CLI both start here.
import { join } from 'node:path';
import type { Config } from './config.js';
import { createPrivateFile, preparePrivateDataDir } from './dataDir.js';
import type { Metrics } from './metrics.js';
import { createReadModels, inApplyOrder } from './projections/readModels.js';
import { ProjectionRunner } from './projections/runner.js';
import { systemClock, type Clock } from './services/runtime.js';
import { instrumentedStore } from './store/instrumented.js';
import type { EventStore } from './store/port.js';
import { SqliteEventStore } from './store/sqlite.js';

export async function openStore(config: Config): Promise<EventStore> {
  if (config.eventStoreConnectionString) {
    // Loaded only when used: the gRPC client is heavy and most installs run embedded.
    const { EventStoreDbEventStore } = await import('./store/eventstoredb.js');
    return new EventStoreDbEventStore(config.eventStoreConnectionString);
  }
  const file = join(config.dataDir, 'events.sqlite');
  createPrivateFile(file);
  return new SqliteEventStore({ file });
}

/** Opens the store and brings every read model up to date with the log. */
export async function openCore(config: Config, clock: Clock = systemClock, metrics?: Pick<Metrics, 'eventsAppended'>) {
  preparePrivateDataDir(config.dataDir);
  const opened = await openStore(config);
  const store = metrics ? instrumentedStore(opened, metrics) : opened;
  const readModels = createReadModels(clock, config.realtime.replayMs);
  const runner = new ProjectionRunner(store, inApplyOrder(readModels));
  await runner.start();
  return { store, readModels, runner, clock };
}

