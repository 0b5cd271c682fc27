// `Idempotency-Key` on admin POSTs (issue 4). Runs after the key check and body parsing, before
// the routers: claims the idempotency key for the app, lets the request run, and keeps the answer
// exactly as the client received it.
import type { Middleware } from 'koa';
import { ConflictError, ValidationError } from '../../domain/errors.js';
import { IdempotencyService } from '../../services/idempotency.js';
import type { AuthState } from './apiKey.js';
import { renderError } from './errors.js';

const KEY = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyState {
  /** The client's Idempotency-Key, for handlers that pass an end-to-end id downstream. */
  idempotencyKey?: string;
}

export function idempotency(service: IdempotencyService, onUnexpected: (error: unknown, path: string) => void): Middleware<IdempotencyState & Partial<AuthState>> {
  return async (ctx, next) => {
    const idempotencyKey = ctx.get('idempotency-key');
    if (ctx.method !== 'POST' || !ctx.path.startsWith('/adm/') || !idempotencyKey) return next();
    if (!KEY.test(idempotencyKey)) throw new ValidationError('Idempotency-Key: must be 1 to 255 visible ASCII characters');
    const apiKey = ctx.state.apiKey;
    if (!apiKey) return next();

    const decision = await service.begin(apiKey.appId, idempotencyKey, IdempotencyService.requestHash(ctx.method, ctx.path, ctx.request.body));
    if (decision.action === 'replay') {
      ctx.status = decision.status;
      ctx.body = decision.body;
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    if (decision.action === 'wait') {
      throw new ConflictError('Idempotency-Key: a request with this key is still being processed; retry in a few seconds');
    }
    ctx.state.idempotencyKey = idempotencyKey;
    let retryable = false;
    try {
      await next();
    } catch (error) {
      ({ retryable } = renderError(ctx, error, onUnexpected));
    }
    // An answer that changed nothing (e.g. the platform was unreachable) frees the key for a retry.
    if (retryable) await service.release(decision.claim);
    else await service.complete(decision.claim, ctx.status, ctx.body);
  };
}
