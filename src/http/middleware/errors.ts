// The one place where errors become HTTP answers. Bodies follow the spec's error form,
// `{code, message, data}`; nothing internal (stack, SQL, platform keys) ever reaches a client.
import type { Context, Middleware } from 'koa';
import {
  AppError,
  changedNothing,
  ConcurrencyError,
  ConflictError,
  ForeignOriginError,
  IdempotencyKeyReusedError,
  InvalidApiKeyError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  PlatformRejectedError,
  PlatformTimeoutError,
  PlatformUnavailableError,
  RateLimitedError,
  ValidationError,
} from '../../domain/errors.js';
import { invalid } from '../validation.js';

const STATUS = new Map<Function, number>([
  [ValidationError, 400],
  [InvalidApiKeyError, 401],
  [PermissionDeniedError, 403],
  [ForeignOriginError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [ConcurrencyError, 409],
  [PayloadTooLargeError, 413],
  [IdempotencyKeyReusedError, 422],
  [RateLimitedError, 429],
  [PlatformRejectedError, 422],
  [PlatformUnavailableError, 502],
  [PlatformTimeoutError, 504],
]);

export function statusOf(error: AppError): number {
  return STATUS.get(error.constructor) ?? 500;
}

/** Errors koa-body and koa raise themselves, expressed in the service's own terms. */
function fromFramework(error: unknown): AppError | undefined {
  const e = error as { status?: number; type?: string; expose?: boolean; message?: string };
  if (e.status === 413 || e.type === 'entity.too.large') return new PayloadTooLargeError('body: larger than the 1 MiB the service accepts');
  if (e.status === 400 && (e.type === 'entity.parse.failed' || e instanceof SyntaxError)) return invalid('body', 'malformed JSON');
  if (e.status === 415) return invalid('body', 'unsupported content type');
  return undefined;
}

export function errorMiddleware(onUnexpected: (error: unknown, path: string) => void): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // Answers nobody wrote a body for (no route, a method the route does not take) get the
      // error form too, not koa's plain-text status line.
      if (ctx.status >= 400 && ctx.body == null) {
        const status = ctx.status;
        const message =
          status === 404
            ? `No route for ${ctx.method} ${ctx.path}`
            : status === 405
              ? `Method ${ctx.method} is not allowed for ${ctx.path} (allowed: ${ctx.response.get('Allow')})`
              : `Cannot ${ctx.method} ${ctx.path}`;
        ctx.body = { code: status, message, data: {} };
        ctx.status = status;
      }
    } catch (thrown) {
      renderError(ctx, thrown, onUnexpected);
    }
  };
}

/**
 * Writes the answer for an error onto ctx. Returns whether the request surely changed nothing,
 * so that a retry is safe (the idempotency layer does not keep such answers).
 */
export function renderError(ctx: Context, thrown: unknown, onUnexpected: (error: unknown, path: string) => void): { retryable: boolean } {
  const error = thrown instanceof AppError ? thrown : fromFramework(thrown);
  if (!error) {
    onUnexpected(thrown, ctx.path);
    ctx.status = 500;
    ctx.body = { code: 500, message: 'Internal error: the service could not complete the request', data: {} };
    return { retryable: true };
  }
  const status = statusOf(error);
  if (error instanceof RateLimitedError) ctx.set('Retry-After', String(error.retryAfterSeconds));
  ctx.status = status;
  ctx.body = { code: status, message: error.message, data: error.details };
  return { retryable: changedNothing(error) };
}
