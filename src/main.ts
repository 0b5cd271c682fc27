// Composition root: the only module that knows every adapter. config → store → read models →
// projections → platform → services → HTTP.
import { createServer, type RequestListener, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { FishpiPlatform } from './community/fishpi.js';
import type { CommunityPlatform } from './community/port.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { ConsoleIndex } from './console/consoleIndex.js';
import { consoleOffRoutes, createConsole } from './console/index.js';
import { createRequestListener } from './http/app.js';
import { draining } from './http/draining.js';
import { startingResponder } from './http/starting.js';
import { boundSockets, timeoutOptions, type SocketBounds } from './http/socketBounds.js';
import { describeOpenFiles, openFilesLimits } from './openFilesLimit.js';
import type { HttpDeps } from './http/deps.js';
import { apiSettings } from './http/route.js';
import { createLogger, type Logger } from './log.js';
import { createMetrics } from './metrics.js';
import { cliOnStore, FROM_SOURCES, passwordLeftOut } from './cliCommand.js';
import { describeStore, openCore, snapshotFile, StoreOpenError, webhookSecretBox } from './core.js';
import { storeFailureMessage } from './domain/errors.js';
import { USER_AGENT, version } from './version.js';
import { missingKeysWarning } from './community/goldFinger.js';
import { instrumentedPlatform } from './community/instrumented.js';
import { IdempotencyService } from './services/idempotency.js';
import { createRealtime } from './realtime/index.js';
import { PlatformOperations } from './services/platformOperations.js';
import { OperationOutcomes } from './services/operationOutcomes.js';
import { systemClock, type Clock } from './system/clock.js';
import { LogClock, type ClockReading } from './services/logClock.js';
import { StoreWriteHealth } from './services/storeHealth.js';
import { reportRunnerTrouble } from './projections/runnerReports.js';
import { SnapshotWriter, type SnapshotOutcome } from './projections/snapshots.js';
import type { EventStore } from './store/port.js';
import { StreamRetention } from './services/retention.js';
import { UserSync } from './services/userSync.js';
import { WorkContext } from './system/workContext.js';
import { WebhookService } from './services/webhooks.js';
import { WebhookDeliverer } from './services/webhookDelivery.js';
import { WebhookSender } from './services/webhookSender.js';
import { PresenceQueries } from './projections/presence.js';

export interface RunningService {
  url: string;
  server: Server;
  deps: HttpDeps;
  /** Deletes ended anonymous streams (runs by itself; tests call runOnce). */
  retention: StreamRetention;
  /** Writes read-model snapshots when they are on (runs by itself; tests call write). */
  snapshots: SnapshotWriter | undefined;
  /** Sends webhook deliveries while this node leads (runs by itself). */
  webhooks: WebhookDeliverer;
  close(): Promise<void>;
}

type ServiceOverrides = { platform?: CommunityPlatform; clock?: Clock; log?: Logger; wrapStore?: (store: EventStore) => EventStore };

export async function startService(config: Config, overrides: ServiceOverrides = {}): Promise<RunningService> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const metrics = createMetrics();
  // Until the node's clock is measured (before the catch-up), its own clock stamps nothing.
  let logClock: LogClock | undefined;
  const clockNow: Clock = { now: () => (logClock ?? overrides.clock ?? systemClock).now() };
  const storeHealth = new StoreWriteHealth(config.nodeId, clockNow);
  const consoleIndex = config.console && new ConsoleIndex(clockNow);
  // Listening before the catch-up: liveness holds while a long log replays, and nothing else is
  // served until the read models are current.
  let handle: RequestListener = startingResponder();
  const bounds: SocketBounds = {
    ...config.sockets,
    // Behind a proxy every socket is the proxy's: it bounds its own clients.
    maxConnectionsPerAddress: config.trustProxy ? undefined : config.sockets.maxConnectionsPerIp,
    ipv6PrefixLength: config.ipv6PrefixLength,
  };
  // Shutdown waits for requests, not sockets: an idle keep-alive or pre-connected socket holds
  // no work and is simply closed.
  const requests = draining();
  const server = createServer({ ...timeoutOptions(bounds), ServerResponse: requests.ServerResponse }, (req, res) => handle(req, res));
  boundSockets(server, bounds, (bound) => metrics.connectionsRefused.inc({ bound }));
  requests.track(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const stopListening = () => {
    server.close();
    server.closeAllConnections();
  };
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  let publicUrl = config.publicUrl;
  // A wildcard address is where we listen, not where a browser can come back to.
  publicUrl ??= ['0.0.0.0', '::'].includes(config.host) ? `http://localhost:${port}` : url;
  const core = await openCore(config, clockNow, metrics, {
    clockFor: async (store) => {
      const local = overrides.clock;
      logClock = new LogClock({
        store,
        nodeId: config.nodeId,
        heartbeatMs: config.nodeHeartbeatMs,
        maxOffsetMs: config.clockMaxOffsetMs,
        ...(local && { localMs: () => Date.parse(local.now()) }),
      });
      await logClock.start();
      return logClock;
    },
    writeHealth: storeHealth,
    storeOutages: {
      began: (error) => log.warn({ reason: storeFailureMessage(error) }, 'the event store is unavailable: requests that need it answer 503 until it answers again'),
      ended: () => log.info('the event store answers again'),
    },
    wrapAdapter: overrides.wrapStore,
    runnerObserver: reportRunnerTrouble(log, metrics),
    ...(consoleIndex && { projections: [consoleIndex] }),
    snapshots: true,
  }).catch((error: unknown) => {
    stopListening();
    throw error;
  });
  const { store, readModels, runner, clock } = core;
  if (core.snapshot) reportSnapshot(core.snapshot, runner.position, log);
  // What this start rebuilt from the log is saved soon (in the background), whatever else the snapshot held.
  const restoredWhole = core.snapshot?.used === true && core.snapshot.rebuilt.length === 0;
  const snapshots =
    config.snapshots &&
    new SnapshotWriter({
      file: snapshotFile(config.dataDir),
      runner,
      store,
      clock,
      nodeId: config.nodeId,
      log,
      ...config.snapshots,
      ...(restoredWhole && core.snapshot?.used && { used: core.snapshot }),
    });
  const clockReading = () => logClock!.reading();
  metrics.measureClockOffset(() => logClock!.reading().offsetMs);
  const platform = instrumentedPlatform(
    overrides.platform ?? new FishpiPlatform({ baseUrl: config.community.url, keys: config.community.keys, timeoutMs: config.community.timeoutMs, userAgent: USER_AGENT }),
    metrics,
  );
  const userSync = new UserSync({ store, platform, runner, users: readModels.users, clock });
  // Endpoint secrets are sealed under a key derived from the session secret (docs/decisions.md).
  const webhookSecrets = webhookSecretBox(config);
  const deps: HttpDeps = {
    nodeId: config.nodeId,
    store,
    runner,
    readModels,
    platform,
    clock,
    clockReading,
    liveness: () => logClock!.liveness(),
    userSync,
    realtime: createRealtime({ config, store, runner, readModels, platform, userSync, clock, log, publicUrl: () => publicUrl! }),
    operations: new PlatformOperations({ store, runner, clock, nodeId: config.nodeId }),
    outcomes: new OperationOutcomes({ store, runner, operations: readModels.operations, clock }),
    idempotency: new IdempotencyService({
      store,
      runner,
      model: readModels.idempotency,
      operations: readModels.operations,
      clock,
      ttlMs: config.idempotencyTtlMs,
      staleMs: config.idempotencyClaimStaleMs,
      nodeId: config.nodeId,
      liveNodes: () => clockReading().liveNodes,
    }),
    metrics,
    storeHealth,
    rateLimit: config.rateLimit,
    platformKeys: config.community.keys,
    pointsSource: config.community.pointsSource,
    pushLimits: config.push,
    addressing: { trustProxy: config.trustProxy, ipv6PrefixLength: config.ipv6PrefixLength },
    signInPageRates: config.signInPageRates,
    realtimeConnectRates: config.realtimeConnectRates,
    api: apiSettings(config, () => publicUrl!),
    webhooks: new WebhookService({ store, runner, webhooks: readModels.webhooks, clock, box: webhookSecrets, settings: config.webhooks }),
    presence: new PresenceQueries(readModels.clients),
  };
  try {
    const orphans = await deps.realtime.hub.closeOrphans();
    if (orphans > 0) log.warn({ orphans, node: config.nodeId }, 'closed out realtime clients left connected by an earlier run of this node');
    await recoverOperations(deps, config, log);
  } catch (error) {
    stopListening();
    logClock!.stop();
    await runner.stop();
    await store.close();
    // Like a store that cannot be opened: what the operator must fix, in one line.
    throw new StoreOpenError(
      `Cannot record what an earlier run of node ${config.nodeId} left half-done in the event store (${describeStore(config)}): ${(error as Error).message}`,
    );
  }
  const stopSweeping = sweepPendingOperations(deps.outcomes, config, clock, clockReading, log);
  // The live node with the least NODE_ID does the work one node does at a time.
  const leads = () => [...clockReading().liveNodes].sort()[0] === config.nodeId;
  const retention = new StreamRetention({
    store,
    nodeId: config.nodeId,
    disposable: readModels.disposableStreams,
    clock,
    clockReading,
    // Two nodes that briefly both think they lead delete the same streams.
    leads,
    log,
    retentionMs: config.anonymousRetentionMs,
    keyTtlMs: config.idempotencyTtlMs,
    onKeysDeleted: (streams) => readModels.idempotency.forget(streams),
  });
  retention.start();
  snapshots?.start();
  const webhookSender = new WebhookSender({ timeoutMs: config.webhooks.timeoutMs, allowPrivate: config.webhooks.allowPrivate, userAgent: `${USER_AGENT} (webhooks)` });
  const webhooks = new WebhookDeliverer({
    store,
    runner,
    webhooks: readModels.webhooks,
    clock,
    clockReading,
    nodeId: config.nodeId,
    leads,
    sender: webhookSender,
    box: webhookSecrets,
    settings: config.webhooks,
    log,
    onAttempt: (result) => metrics.webhookAttempts.inc({ result }),
  });
  webhooks.start();
  metrics.countOpenConnections(() => deps.realtime.hub.size);
  const operatorConsole = config.console && consoleIndex && createConsole(config.console, config, deps, consoleIndex, log);
  handle = createRequestListener(deps, log, [operatorConsole ? operatorConsole.routes : consoleOffRoutes]);
  log.info({ url, store: describeStore(config), community: config.community.url }, 'listening');
  const openFiles = describeOpenFiles(openFilesLimits(), { streams: config.realtime.maxConnections, sockets: config.sockets.maxConnections });
  if (openFiles.short) log.warn(openFiles.line);
  else log.info(openFiles.line);
  return {
    url,
    server,
    deps,
    retention,
    snapshots: snapshots || undefined,
    webhooks,
    /**
     * Stops accepting, lets in-flight requests finish (up to the shutdown timeout less a margin
     * for flushing), then closes what is left, flushes the store and releases the platform.
     */
    async close() {
      server.close();
      // A response still to be written closes its connection, so no request can follow on it.
      requests.begin();
      // Realtime streams never finish on their own: end them (and record the disconnects), then
      // close the keep-alive sockets they leave idle.
      await deps.realtime.hub.stop();
      await operatorConsole?.close();
      server.closeIdleConnections();
      await requests.settled(Math.max(0, config.shutdownTimeoutMs - 1500));
      server.closeAllConnections();
      stopSweeping();
      await retention.stop();
      await snapshots?.stop();
      await webhooks.stop();
      await webhookSender.close();
      await logClock!.leave();
      await runner.stop();
      await store.close();
      platform.close();
    },
  };
}

/** Whether the read models started from a snapshot, and if not why, in the start-up log. */
function reportSnapshot(outcome: SnapshotOutcome, caughtUpTo: number, log: Logger): void {
  if (outcome.used) {
    const { position, ageMs, restored, rebuilt } = outcome;
    log.info(
      { position, ageS: Math.round(ageMs / 1000), caughtUpTo, restored, rebuilt },
      rebuilt.length > 0
        ? `read models restored from a snapshot at position ${position}; rebuilt from the log: ${rebuilt.map(({ name, why }) => `${name} (${why})`).join(', ')}`
        : `read models restored from a snapshot at position ${position}`,
    );
  } else if (outcome.warn) {
    log.warn({ caughtUpTo }, `read-model snapshot not used: ${outcome.reason}; the read models were rebuilt from the whole log`);
  } else {
    log.info({ caughtUpTo }, `read-model snapshot not used: ${outcome.reason}; the read models were rebuilt from the whole log`);
  }
}

/**
 * Before serving: what an earlier run of this node left half-done. Operations it sent without
 * recording an answer become unknown (never sent again); its claims that sent nothing are freed.
 */
async function recoverOperations(deps: HttpDeps, config: Config, log: Logger): Promise<void> {
  const work = WorkContext.ofNode(config.nodeId);
  const unknown = await deps.outcomes.closePending(work, { node: config.nodeId });
  if (unknown > 0) log.warn({ unknown, node: config.nodeId }, 'operations this node left pending when it stopped are now unknown: resolve them with `cli operations`');
  const released = await deps.idempotency.releaseOrphanedClaims(work);
  if (released > 0) log.info({ released, node: config.nodeId }, 'freed Idempotency-Keys whose requests stopped before sending anything');
}

/**
 * Operations pending for longer than the grace belong to a sender that is gone for good (its
 * request ended long ago, whatever became of its process). A node whose clock is off the log's
 * judges nobody's.
 */
function sweepPendingOperations(outcomes: OperationOutcomes, config: Config, clock: Clock, clockReading: () => ClockReading, log: Logger): () => void {
  const work = WorkContext.ofNode(config.nodeId);
  const sweep = async () => {
    if (!clockReading().trusted) return;
    const requestedBefore = new Date(Date.parse(clock.now()) - config.operationPendingGraceMs).toISOString();
    const unknown = await outcomes.closePending(work, { requestedBefore });
    if (unknown > 0) log.warn({ unknown }, 'operations pending past OPERATION_PENDING_GRACE_MS are now unknown: resolve them with `cli operations`');
  };
  const timer = setInterval(() => sweep().catch((err: unknown) => log.error({ err }, 'sweeping pending operations failed')), Math.min(config.operationPendingGraceMs / 4, 60_000));
  timer.unref();
  return () => clearInterval(timer);
}

/** What a person starting the service needs next, on stderr (stdout carries the JSON logs). */
function nextSteps(config: Config, url: string): string {
  const missingKeys = missingKeysWarning(config.community.keys);
  return [
    `community-bridge ${version} listening on ${url} (store: ${describeStore(config)})`,
    `  API reference and "Try it out":  ${url}/docs`,
    `  Create an API key:               ${cliOnStore(config)} keys create --app-id <your-game> --app "<Your Game>" --permissions '*'`,
    ...(passwordLeftOut(config)
      ? ['                                    (put the password back in place of ***, or give the service EVENTSTORE_CONNECTION_STRING_FILE: then this line names the file)']
      : []),
    ...(FROM_SOURCES ? ['  Everything with a simulated platform, no account needed: npm run dev'] : []),
    ...(missingKeys ? [`  Warning: ${missingKeys}.`] : []),
    ...(config.deprecatedNames ?? []).map((line) => `  Warning: ${line}.`),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  let config: Config;
  try {
    // The one command-line flag, read by openStore (src/core.ts): open a log that lost events.
    config = Object.assign(loadConfig(), { acceptLogLoss: process.argv.slice(2).includes('--accept-log-loss') });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  let service: RunningService;
  try {
    service = await startService(config);
  } catch (error) {
    // What an operator has to fix (a path, a file, a server): one line, no stack.
    if (error instanceof StoreOpenError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  process.stderr.write(nextSteps(config, service.url));
  const stop = () => {
    // A close that hangs must not keep an orchestrator waiting past the promised deadline.
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    void service.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
