// The event-sourced core without any HTTP: the store and the read models folded from it. The
// service (src/main.ts) and the operator CLI both start here.
import { resolve } from 'node:path';
import type { Config } from './config.js';
import { createPrivateFile, preparePrivateDataDir } from './dataDir.js';
import type { Metrics } from './metrics.js';
import { createReadModels, inApplyOrder, type ReadModelOptions } from './projections/readModels.js';
import { ProjectionRunner, type Projection, type RunnerObserver } from './projections/runner.js';
import { readSnapshotFile } from './projections/snapshotFile.js';
import { loadSnapshot, type SnapshotOutcome } from './projections/snapshots.js';
import { systemClock, type Clock } from './system/clock.js';
import type { StoreWriteHealth } from './services/storeHealth.js';
import { redactedConnectionString, storeKindOf } from './store/connectionString.js';
import { instrumentedStore } from './store/instrumented.js';
import type { OutageObserver } from './store/writeHealth.js';
import type { EventStore } from './store/port.js';
import { resumingStore } from './store/resuming.js';
import { SqliteEventStore } from './store/sqlite.js';
import { DuplicateNodeError } from './services/logClock.js';
import { loadSessionSecret } from './realtime/sessions.js';
import { SecretBox } from './system/sealed.js';
import { WEBHOOK_SECRET_PURPOSE } from './services/webhooks.js';

/** The store could not be opened or read at start; the message names where it is and why. */
export class StoreOpenError extends Error {}

/** The configuration, and what only a command line sets. */
export type CoreConfig = Config & {
  /** Open an embedded log that lost events since the last run (`--accept-log-loss`). */
  acceptLogLoss?: boolean;
};

/** The embedded store's files in DATA_DIR: the log, and the marker of its highest position (logMarker.ts). */
export function sqliteFiles(dataDir: string): { database: string; marker: string } {
  return { database: resolve(dataDir, 'events.sqlite'), marker: resolve(dataDir, 'events.position') };
}

/** Where a node keeps its read-model snapshot, whatever its store (a PostgreSQL node has a DATA_DIR too). */
export function snapshotFile(dataDir: string): string {
  return resolve(dataDir, 'snapshots', 'read-models.snapshot');
}

/** Where the configured store is, for messages (never with a password). */
export function describeStore(config: Config): string {
  const connectionString = config.eventStoreConnectionString;
  if (!connectionString) return `SQLite file ${sqliteFiles(config.dataDir).database}`;
  return `${storeKindOf(connectionString) === 'postgresql' ? 'PostgreSQL' : 'EventStoreDB'} at ${redactedConnectionString(connectionString)}`;
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Opens the configured adapter inside resumingStore, so that subscriptions resume by themselves.
 * `wrapAdapter` goes between the two (tests inject faults there); `clock` stamps the embedded
 * store's events.
 */
export async function openStore(config: CoreConfig, wrapAdapter: (store: EventStore) => EventStore = (store) => store, clock: Clock = systemClock): Promise<EventStore> {
  let adapter: EventStore;
  try {
    if (config.eventStoreConnectionString && storeKindOf(config.eventStoreConnectionString) === 'postgresql') {
      // Loaded only when used, as the EventStoreDB client below. Opening migrates the schema.
      const { PostgresEventStore } = await import('./store/postgres.js');
      adapter = await PostgresEventStore.open({ connectionString: config.eventStoreConnectionString });
    } else if (config.eventStoreConnectionString) {
      // Loaded only when used: the gRPC client is heavy and most installs run embedded.
      const { EventStoreDbEventStore } = await import('./store/eventstoredb.js');
      adapter = new EventStoreDbEventStore(config.eventStoreConnectionString);
    } else {
      const { database, marker } = sqliteFiles(config.dataDir);
      preparePrivateDataDir(config.dataDir);
      createPrivateFile(database);
      adapter = new SqliteEventStore({
        file: database,
        clock: () => clock.now(),
        // On stderr, for the service and the CLI alike (the service's stdout is its JSON log).
        positionMarker: { file: marker, acceptLogLoss: config.acceptLogLoss === true, warn: (message) => void process.stderr.write(`Warning: ${message}\n`) },
      });
    }
  } catch (error) {
    throw new StoreOpenError(`Cannot open the event store (${describeStore(config)}): ${reason(error)}`);
  }
  return resumingStore(wrapAdapter(adapter));
}

/** The read models' settings from the service's configuration (the CLI's rebuild uses them too). */
export function readModelOptions(config: Config): ReadModelOptions {
  return { replayMs: config.realtime.replayMs, replayMaxBytes: config.realtime.replayMaxBytes, keyReachMs: config.idempotencyTtlMs + config.idempotencyClaimStaleMs };
}

export interface CoreOptions {
  /** Appends that fail because of the store are reported here (/readyz). */
  writeHealth?: StoreWriteHealth;
  /** Told when the store starts failing and when it answers again (logged once per outage). */
  storeOutages?: OutageObserver;
  /** Hears of read models that throw and of subscription interruptions. */
  runnerObserver?: RunnerObserver;
  /** Wraps the adapter before anything else sees it (tests inject faults here). */
  wrapAdapter?: (store: EventStore) => EventStore;
  /** Folded by the same runner after the service's own read models (the console's index). */
  projections?: readonly Projection[];
  /** Start from the read-model snapshot in DATA_DIR when the configuration has them on (the service). */
  snapshots?: boolean;
  /**
   * The clock the read models and everything after them read, made once the store is open and
   * before the catch-up (a node's clock is measured against the store's); default: `clock`.
   */
  clockFor?: (store: EventStore) => Promise<Clock>;
}

/** Opens the store and brings every read model up to date with the log. */
export async function openCore(config: CoreConfig, clock: Clock = systemClock, metrics?: Pick<Metrics, 'eventsAppended' | 'storeAppendFailures'>, options: CoreOptions = {}) {
  // Read while the store opens and the clock is measured; checked against the store once it is open.
  const snapshotRead = options.snapshots && config.snapshots ? readSnapshotFile(snapshotFile(config.dataDir)) : undefined;
  snapshotRead?.catch(() => undefined);
  // Read at each append: the clock may still be replaced below (clockFor).
  const opened = await openStore(config, options.wrapAdapter, { now: () => clock.now() });
  const store = metrics
    ? instrumentedStore(opened, metrics, { ...(options.writeHealth && { appends: options.writeHealth }), ...(options.storeOutages && { outages: options.storeOutages }) })
    : opened;
  if (options.clockFor) {
    try {
      clock = await options.clockFor(store);
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error instanceof DuplicateNodeError
        ? new StoreOpenError(error.message)
        : new StoreOpenError(`Cannot record this node's heartbeat in the event store (${describeStore(config)}): ${reason(error)}`);
    }
  }
  const readModels = createReadModels(clock, readModelOptions(config));
  const runner = new ProjectionRunner(store, [...inApplyOrder(readModels), ...(options.projections ?? [])], options.runnerObserver);
  let snapshot: SnapshotOutcome | undefined;
  try {
    let restored = new Map<Projection, number>();
    if (snapshotRead) {
      ({ restored, outcome: snapshot } = await loadSnapshot(snapshotFile(config.dataDir), snapshotRead, store, runner.projections, { clock }));
    }
    await runner.start({ restored });
  } catch (error) {
    await store.close().catch(() => undefined);
    throw new StoreOpenError(`Cannot read the event store (${describeStore(config)}): ${reason(error)}`);
  }
  return { store, readModels, runner, clock, snapshot };
}

/**
 * What webhook endpoint secrets are sealed with: a key derived from the session secret
 * (SESSION_SECRET, or DATA_DIR/session-secret), the same for the service and the CLI.
 */
export function webhookSecretBox(config: Pick<Config, 'sessionSecret' | 'dataDir'>): SecretBox {
  return new SecretBox(loadSessionSecret(config.sessionSecret, config.dataDir), WEBHOOK_SECRET_PURPOSE);
}
