// For whoever runs or integrates the service: what it is, whether it is alive and ready, its
// metrics, and its own description.
import type * as v from 'valibot';
import { HealthBody, NotReadyBody, type NotReadyReason, ReadyBody, ServiceBody } from '../../contract/answers.js';
import { missingKeysWarning } from '../../community/goldFinger.js';
import { storeFailureMessage } from '../../domain/errors.js';
import { describeFailure } from '../../projections/runner.js';
import { docsAsset, docsPage } from '../pages/docs.js';
import { homePage } from '../pages/home.js';
import { authenticate } from '../middleware/apiKey.js';
import { route, type RouteContext, type RouteDeps } from '../route.js';

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

/** Why a node is not ready: a code anyone may read, and words for the log and operators. */
export interface NotReady {
  reason: v.InferOutput<typeof NotReadyReason>;
  detail: string;
}

/** Why the node cannot be trusted with requests even though the store answers, if it cannot. */
async function degraded({ store, runner, storeHealth, clockReading }: RouteDeps): Promise<NotReady | undefined> {
  const [failure] = runner.failures;
  // A read model that threw may answer wrong: it stays so until a fixed version folds the log.
  if (failure) return { reason: 'read_model_failed', detail: describeFailure(failure) };
  const clock = clockReading();
  if (!clock.trusted) {
    return {
      reason: 'clock_offset',
      detail: `This node's clock is ${clock.offsetMs} ms off the log's clock (more than CLOCK_MAX_OFFSET_MS): it judges no other node's work until its clock is set right`,
    };
  }
  if (!storeHealth.failure) return undefined;
  await withTimeout(storeHealth.probe(store), READY_WAIT_MS, 'the event store').catch(() => undefined);
  const still = storeHealth.failure;
  return still && { reason: 'store_appends_failing', detail: `Appends to the event store fail (since ${still.since}): ${still.message}` };
}

/** Why this node is not ready, or undefined when it is (/readyz, and service_ready in /metrics). */
async function notReady(deps: RouteDeps): Promise<NotReady | undefined> {
  let head: number;
  try {
    head = await withTimeout(deps.store.headPosition(), READY_WAIT_MS, 'the event store');
  } catch (error) {
    // The store's own words (which connection failed, how), not the answer a request gets.
    return { reason: 'store_unreachable', detail: storeFailureMessage(error) };
  }
  try {
    await deps.runner.waitFor(head, READY_WAIT_MS);
  } catch (error) {
    return { reason: 'catching_up', detail: storeFailureMessage(error) };
  }
  return degraded(deps);
}

/** The last detail logged per node, so that a probe every few seconds logs a change once. */
const lastLogged = new WeakMap<RouteDeps['runner'], string | undefined>();

/** Readiness as it changes, in the node's log: the words /readyz keeps from anonymous callers. */
function logChange(deps: RouteDeps, state: NotReady | undefined): void {
  const detail = state?.detail;
  if (lastLogged.get(deps.runner) === detail) return;
  const was = lastLogged.has(deps.runner);
  lastLogged.set(deps.runner, detail);
  if (state) deps.realtime.log.warn({ reason: state.reason, detail }, 'not ready');
  else if (was) deps.realtime.log.info('ready again');
}

/** Whether the request carries an operator's key (enabled, reaching every app): it may see the details. */
function fromOperator(ctx: RouteContext, { readModels, clock }: RouteDeps): boolean {
  const presented = ctx.get('apikey');
  if (!presented) return false;
  try {
    return authenticate(readModels.apiKeys, clock, presented).allApps;
  } catch {
    return false;
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
    description:
      "No apiKey: the status and, when not ready, a reason code. With the apiKey of a key that reaches every app (an operator's), also the detail, the position, the clock offset and the settings' warnings; the node's log has the detail too.",
    access: { kind: 'public' },
    ok: { description: 'Ready', json: ReadyBody },
    answers: { 503: { description: 'Not ready (store unreachable or failing, read models behind or failed); `reason` says why in a code', json: NotReadyBody } },
    async handle(ctx, _input, deps) {
      const state = await notReady(deps);
      logChange(deps, state);
      ctx.set('Cache-Control', 'no-store');
      // Anyone may probe readiness; what the store is and where stays with operators and the log.
      const operator = fromOperator(ctx, deps);
      const details = operator ? { position: deps.runner.position, clockOffsetMs: deps.clockReading().offsetMs, ...warningsOf(deps) } : {};
      if (state === undefined) return { status: 'ready' as const, ...details };
      ctx.status = 503;
      ctx.body = { status: 'not ready', reason: state.reason, ...(operator && { detail: state.detail }), ...details };
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
      const state = await notReady(deps);
      logChange(deps, state);
      metrics.ready.set(state === undefined ? 1 : 0);
      metrics.unknownOutcomes.set(readModels.operations.withoutOutcome('unknown').length);
      const { liveNodes } = deps.clockReading();
      // A node that left drops its series rather than reporting 0 forever.
      metrics.presenceClients.reset();
      metrics.presenceUsers.reset();
      for (const [node, { clients, users }] of deps.presence.byNode(liveNodes)) {
        metrics.presenceClients.set({ node }, clients);
        metrics.presenceUsers.set({ node }, users);
      }
      metrics.presenceOnline.set(deps.presence.online(liveNodes).length);
      metrics.webhookPending.set(readModels.webhooks.pendingTotal());
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
