// The one place where errors become HTTP answers. Bodies follow the spec's error form,
// `{code, message, data}`; nothing internal (stack, SQL, platform keys) ever reaches a client.
import type { Context, Middleware } from 'koa';
import {
  AppError,
  ConcurrencyError,
  ConflictError,
  IdempotencyKeyReusedError,
  InvalidApiKeyError,
  NotConfiguredError,
  NotFoundError,
  OperationNotAppliedError,
  OutcomeUnknownError,
  PermissionDeniedError,
  PlatformRejectedError,
  PlatformTimeoutError,
  PlatformUnavailableError,
  RecordTooLargeError,
  ValidationError,
} from '../../domain/errors.js';
import { ForeignOriginError, PayloadTooLargeError, RateLimitedError } from '../errors.js';
import { formatBytes } from '../route.js';
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
  [RecordTooLargeError, 413],
  [IdempotencyKeyReusedError, 422],
  [RateLimitedError, 429],
  [PlatformRejectedError, 422],
  [PlatformUnavailableError, 502],
  [PlatformTimeoutError, 504],
  [OutcomeUnknownError, 504],
  [NotConfiguredError, 503],
  [OperationNotAppliedError, 409],
]);

/** Messages that would name internals (streams, revisions) get a message for the caller instead. */
function publicMessage(error: AppError): string {
  if (error instanceof ConcurrencyError) return 'The record was changed by concurrent requests for too long; retry the request';
  return error.message;
}

export type OnUnexpected = (error: unknown, path: string) => void;

export function statusOf(error: AppError): number {
  if (error instanceof OutcomeUnknownError && !error.noAnswer) return 502;
  // A subclass answers like the class it refines, unless it is listed itself.
  for (let type = error.constructor; type !== AppError; type = Object.getPrototypeOf(type)) {
    const status = STATUS.get(type);
    if (status !== undefined) return status;
  }
  return 500;
}

/** Errors koa-body and koa raise themselves, expressed in the service's own terms. */
function fromFramework(error: unknown, maxBodyBytes: number): AppError | undefined {
  const e = error as { status?: number; type?: string; expose?: boolean; message?: string };
  if (e.status === 413 || e.type === 'entity.too.large') return new PayloadTooLargeError(`body: larger than the ${formatBytes(maxBodyBytes)} the service accepts`);
  if (e.status === 400 && (e.type === 'entity.parse.failed' || e instanceof SyntaxError)) return invalid('body', 'malformed JSON');
  if (e.status === 415) return invalid('body', 'unsupported content type');
  return undefined;
}

/** Writes the answer for an error onto ctx; an error the service did not expect is logged, never shown. */
export type RenderError = (ctx: Context, thrown: unknown) => void;

export function errorRenderer(onUnexpected: OnUnexpected, maxBodyBytes: number): RenderError {
  return (ctx, thrown) => {
    const error = thrown instanceof AppError ? thrown : fromFramework(thrown, maxBodyBytes);
    if (!error) {
      onUnexpected(thrown, ctx.path);
      ctx.status = 500;
      ctx.body = { code: 500, message: 'Internal error: the service could not complete the request', data: {} };
      return;
    }
    const status = statusOf(error);
    if (error instanceof RateLimitedError) ctx.set('Retry-After', String(error.retryAfterSeconds));
    ctx.status = status;
    ctx.body = { code: status, message: publicMessage(error), data: error.details };
  };
}

export function errorMiddleware(render: RenderError): Middleware {
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
      render(ctx, thrown);
    }
  };
}
