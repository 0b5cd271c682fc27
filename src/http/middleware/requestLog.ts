// One JSON log line and one metrics sample per request: request id, app, route, status, duration.
// Runs outermost so it sees the final status. Never logs headers or bodies (keys, cookies).
// The one place that decides a request's id: the caller's X-Request-Id when it is well formed,
// else a new one; echoed in the answer, and the request's work context (ctx.state.work) carries it,
// so the events it appends do.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics.js';
import { WorkContext } from '../../system/workContext.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

type RequestMetrics = Pick<Metrics, 'httpDuration'>;

/** What every request's state holds from its first middleware on. */
export interface WorkState {
  requestId: string;
  /** Who the request works for: what it appends is stamped with it. */
  work: WorkContext;
}

/** The caller's X-Request-Id when it is well formed, else a new one. */
export const requestIdOf = (incoming: string): string => (REQUEST_ID.test(incoming) ? incoming : randomUUID());

/** A finished request's metrics sample and log line. */
export function recordRequest(
  log: Logger,
  metrics: RequestMetrics,
  request: { requestId: string; appId: string | undefined; labels: { method: string; route: string; status: string }; started: number },
): void {
  const { requestId, appId, labels } = request;
  const durationMs = performance.now() - request.started;
  metrics.httpDuration.observe(labels, durationMs / 1000);
  if (log.isLevelEnabled('info')) log.info({ requestId, appId, ...labels, durationMs: Math.round(durationMs * 10) / 10 }, 'request');
}

/** `nodeId`: the node serving, which every request's events name. */
export function requestLog(log: Logger, metrics: RequestMetrics, nodeId: string | undefined): Middleware<WorkState> {
  return async (ctx, next) => {
    const started = performance.now();
    const requestId = requestIdOf(ctx.get('x-request-id'));
    ctx.state.requestId = requestId;
    ctx.state.work = WorkContext.ofRequest(requestId, nodeId);
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      // The route pattern, not the path, keeps the label set small (/adm/vip/:oId, not every oId).
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const route = typeof matched === 'string' ? matched : 'unmatched';
      const appId = (ctx.state as { actor?: { appId: string } }).actor?.appId;
      recordRequest(log, metrics, { requestId, appId, labels: { method: ctx.method, route, status: String(ctx.status) }, started });
    }
  };
}
