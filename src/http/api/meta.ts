// For whoever runs or integrates the service: what it is, whether it is alive and ready, its
// metrics, and its own description.
import { HealthBody, NotReadyBody, ReadyBody, ServiceBody } from '../../contract/answers.js';
import { missingKeysWarning } from '../../community/goldFinger.js';
import { storeFailureMessage } from '../../domain/errors.js';
import { describeFailure } from '../../projections/runner.js';
import { docsAsset, docsPage } from '../pages/docs.js';
import { homePage } from '../pages/home.js';
import { route, type RouteDeps } from '../route.js';

const READY_WAIT_MS = 1000;
/**
 * Followers held back this long are said in /readyz's warnings: past it, a request waiting to read
 * its own write (5 s) gives up. The node stays ready: appends go on, every node shares the cause,
 * and taking them all out of rotation would not end it.
 */
const HELD_BACK_WARNING_MS = 5000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Why the node cannot be trusted with requests even though the store answers, if it cannot. */
async function degraded({ store, runner, storeHealth, clockReading }: RouteDeps): Promise<string | undefined> {
  const [failure] = runner.failures;
  // A read model that threw may answer wrong: it stays so until a fixed version folds the log.
  if (failure) return describeFailure(failure);
  const clock = clockReading();
  if (!clock.trusted) {
    return `This node's clock is ${clock.offsetMs} ms off the log's clock (more than CLOCK_MAX_OFFSET_MS): it judges no other node's work until its clock is set right`;
  }
  if (!storeHealth.failure) return undefined;
  await withTimeout(storeHealth.probe(store), READY_WAIT_MS, 'the event store').catch(() => undefined);
  const still = storeHealth.failure;
  return still && `Appends to the event store fail (since ${still.since}): ${still.message}`;
}

/** Why this node is not ready, or undefined when it is (/readyz, and service_ready in /metrics). */
async function notReady(deps: RouteDeps): Promise<string | undefined> {
  try {
    const head = await withTimeout(deps.store.headPosition(), READY_WAIT_MS, 'the event store');
    await deps.runner.waitFor(head, READY_WAIT_MS);
    return await degraded(deps);
  } catch (error) {
    // The store's own words, not the answer a request gets.
    return storeFailureMessage(error);
  }
}

/** What leaves some operations answering 503 or late: ready all the same, but said. */
function warningsOf({ platformKeys, store }: RouteDeps): { warnings?: string[] } {
  const warnings: string[] = [];
  const missingKeys = missingKeysWarning(platformKeys);
  if (missingKeys) warnings.push(missingKeys);
  const heldBackMs = store.heldBackMs?.() ?? 0;
  if (heldBackMs >= HELD_BACK_WARNING_MS) {
    warnings.push(
      `The log's newest events have waited ${Math.round(heldBackMs / 1000)} s to become readable: a transaction in the PostgreSQL cluster that wrote is still open ` +
        '(pg_stat_activity, the oldest backend_xid). Appends go on; read models, live streams and answers that wait for their own writes wait for it to end',
    );
  }
  return warnings.length > 0 ? { warnings } : {};
}

const text = (mediaType: string, description: string) => ({ description, media: { [mediaType]: { type: 'string' } } });

export const metaRoutes = [
  route({
    method: 'get',
    path: '/',
    tag: 'meta',
    summary: 'What this service is, and where its documentation is',
    access: { kind: 'public' },
    ok: { description: 'A short page; JSON for `Accept: application/json`', json: ServiceBody, media: { 'text/html': { type: 'string' } } },
    handle: (ctx) => homePage(ctx),
  }),

  route({
    method: 'get',
    path: '/healthz',
    tag: 'meta',
    summary: 'Liveness: the process runs',
    access: { kind: 'public' },
    ok: { description: 'Alive', json: HealthBody },
    handle: () => ({ status: 'ok' as const }),
  }),

  // Ready: the store answers and takes appends, and the read models have applied everything it
  // held when asked, without an error.
  route({
    method: 'get',
    path: '/readyz',
    tag: 'meta',
    summary: 'Readiness: the store answers and the read models have caught up with it',
    access: { kind: 'public' },
    ok: { description: 'Ready', json: ReadyBody },
    answers: { 503: { description: 'Not ready (store unreachable or failing, read models behind or failed); `reason` says why', json: NotReadyBody } },
    async handle(ctx, _input, deps) {
      const reason = await notReady(deps);
      const { runner } = deps;
      if (reason === undefined) return { status: 'ready' as const, position: runner.position, clockOffsetMs: deps.clockReading().offsetMs, ...warningsOf(deps) };
      ctx.status = 503;
      ctx.body = { status: 'not ready', reason, position: runner.position, clockOffsetMs: deps.clockReading().offsetMs, ...warningsOf(deps) };
    },
  }),

  route({
    method: 'get',
    path: '/metrics',
    tag: 'meta',
    summary: 'Prometheus metrics',
    access: { kind: 'public' },
    ok: text('text/plain', 'Prometheus text format'),
    async handle(ctx, _input, deps) {
      const { store, runner, metrics, readModels } = deps;
      metrics.storeHeldBack.set((store.heldBackMs?.() ?? 0) / 1000);
      try {
        metrics.projectionLag.set(Math.max(0, (await withTimeout(store.headPosition(), READY_WAIT_MS, 'the event store')) - runner.position));
      } catch {
        // The lag stays at its last value; the store's own trouble shows on /readyz and in service_ready.
      }
      metrics.ready.set((await notReady(deps)) === undefined ? 1 : 0);
      metrics.unknownOutcomes.set(readModels.operations.withoutOutcome('unknown').length);
      ctx.type = metrics.registry.contentType;
      ctx.body = await metrics.registry.metrics();
    },
  }),

  route({
    method: 'get',
    path: '/openapi.json',
    tag: 'meta',
    summary: 'This document',
    access: { kind: 'public' },
    ok: { description: 'OpenAPI 3.1', media: { 'application/json': { type: 'object', additionalProperties: true } } },
    handle: (ctx, _input, { apiDocument }) => {
      ctx.body = apiDocument();
    },
  }),

  route({
    method: 'get',
    path: '/docs',
    tag: 'meta',
    summary: 'This document as a readable page',
    access: { kind: 'public' },
    ok: text('text/html', 'A Swagger UI page'),
    handle: (ctx) => docsPage(ctx),
  }),

  route({
    method: 'get',
    path: '/docs/assets/:file',
    tag: 'meta',
    summary: "The documentation page's own files",
    access: { kind: 'public' },
    ok: { description: 'The file' },
    undocumented: true,
    async handle(ctx) {
      if (!(await docsAsset(ctx, ctx.params.file!))) ctx.status = 404;
    },
  }),
];
