// Liveness, readiness and Prometheus metrics for whoever runs the service.
import Router from '@koa/router';
import { missingKeysWarning, type GoldFingerKeys } from '../../community/goldFinger.js';
import type { Metrics } from '../../metrics.js';
import type { ProjectionRunner } from '../../projections/runner.js';
import type { EventStore } from '../../store/port.js';

const READY_WAIT_MS = 1000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function healthRouter({ store, runner, metrics, platformKeys }: { store: EventStore; runner: ProjectionRunner; metrics: Metrics; platformKeys: GoldFingerKeys }): Router {
  const router = new Router();
  // Settings that leave some operations answering 503: ready all the same, but said.
  const missingKeys = missingKeysWarning(platformKeys);
  const warnings = missingKeys ? { warnings: [missingKeys] } : {};

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  // Ready: the store answers, and the read models have applied everything it held when asked.
  router.get('/readyz', async (ctx) => {
    try {
      const head = await withTimeout(store.headPosition(), READY_WAIT_MS, 'the event store');
      await runner.waitFor(head, READY_WAIT_MS);
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
