// Liveness, readiness and Prometheus metrics for whoever runs the service.
import Router from '@koa/router';
import { missingKeysWarning, type GoldFingerKeys } from '../../community/goldFinger.js';
import type { Metrics } from '../../metrics.js';
import { describeFailure, type ProjectionRunner } from '../../projections/runner.js';
import type { StoreWriteHealth } from '../../services/storeHealth.js';
import type { EventStore } from '../../store/port.js';

const READY_WAIT_MS = 1000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Why the node cannot be trusted with requests even though the store answers, if it cannot. */
async function degraded(store: EventStore, runner: ProjectionRunner, storeHealth: StoreWriteHealth): Promise<string | undefined> {
  const [failure] = runner.failures;
  // A read model that threw may answer wrong: it stays so until a fixed version folds the log.
  if (failure) return describeFailure(failure);
  if (!storeHealth.failure) return undefined;
  await withTimeout(storeHealth.probe(store), READY_WAIT_MS, 'the event store').catch(() => undefined);
  const still = storeHealth.failure;
  return still && `Appends to the event store fail (since ${still.since}): ${still.message}`;
}

export function healthRouter({
  store,
  runner,
  metrics,
  storeHealth,
  platformKeys,
}: {
  store: EventStore;
  runner: ProjectionRunner;
  metrics: Metrics;
  storeHealth: StoreWriteHealth;
  platformKeys: GoldFingerKeys;
}): Router {
  const router = new Router();
  // Settings that leave some operations answering 503: ready all the same, but said.
  const missingKeys = missingKeysWarning(platformKeys);
  const warnings = missingKeys ? { warnings: [missingKeys] } : {};

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  // Ready: the store answers and takes appends, and the read models have applied everything it
  // held when asked, without an error.
  router.get('/readyz', async (ctx) => {
    try {
      const head = await withTimeout(store.headPosition(), READY_WAIT_MS, 'the event store');
      await runner.waitFor(head, READY_WAIT_MS);
      const reason = await degraded(store, runner, storeHealth);
      if (reason) throw new Error(reason);
      ctx.body = { status: 'ready', position: runner.position, ...warnings };
    } catch (error) {
      ctx.status = 503;
      ctx.body = { status: 'not ready', reason: (error as Error).message, position: runner.position, ...warnings };
    }
  });

  router.get('/metrics', async (ctx) => {
    try {
      metrics.projectionLag.set(Math.max(0, (await withTimeout(store.headPosition(), READY_WAIT_MS, 'the event store')) - runner.position));
    } catch {
      // The lag stays at its last value; the store's own trouble shows on /readyz.
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });

  return router;
}
