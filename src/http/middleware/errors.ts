// The one place where errors become HTTP answers. Bodies follow the spec's error form,
// `{code, message, data}`: the spec's own 401 and 403 keep `data: {}`, every other error says
// `data.reason` (one of src/contract/answers.ts's closed list, with the fields that reason
// promises). Nothing internal (stack, SQL, platform keys) ever reaches a client.
import type { Context, Middleware } from 'koa';
import type { ErrorAnswer } from '../../contract/answers.js';
import {
  AppError,
  ClaimInProgressError,
  ConcurrencyError,
  ConflictError,
  failureOf,
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
  StoreUnavailableError,
  UserNotFoundError,
  ValidationError,
} from '../../domain/errors.js';
import { ClaimLostError } from '../../domain/idempotency.js';
import { ForeignOriginError, PayloadTooLargeError, RateLimitedError } from '../errors.js';
import { formatBytes } from '../route.js';
import { invalid } from '../validation.js';

/** On a 403 for an API key: the permission the key lacks (the body is the spec's, `data: {}`). */
export const MISSING_PERMISSION_HEADER = 'X-Missing-Permission';

/** The spec's own bodies: a status and `data: {}`, whatever went wrong in detail. */
type SpecAnswer = { status: 401 | 403; spec: true };
type Answer = ErrorAnswer | SpecAnswer;

type ErrorClass<E extends AppError> = abstract new (...args: never[]) => E;

/** One class's answer, typed by the class it reads its fields from. */
const rule = <E extends AppError>(type: ErrorClass<E>, answer: (error: E) => Answer): [ErrorClass<AppError>, (error: AppError) => Answer] => [
  type,
  answer as (error: AppError) => Answer,
];

// A subclass answers like the class it refines, unless it is listed itself.
const RULES = new Map<ErrorClass<AppError>, (error: AppError) => Answer>([
  rule(ValidationError, (e) => ({ status: 400, data: { reason: 'validation_failed', issues: e.issues } })),
  // The spec's body for its own error; refinements (the console's sign-in) say what they are.
  rule(InvalidApiKeyError, (e) => (e.constructor === InvalidApiKeyError ? { status: 401, spec: true } : { status: 401, data: { reason: 'unauthenticated' } })),
  rule(PermissionDeniedError, (e) => (e.constructor === PermissionDeniedError ? { status: 403, spec: true } : { status: 403, data: { reason: 'forbidden' } })),
  rule(ForeignOriginError, () => ({ status: 403, data: { reason: 'foreign_origin' } })),
  rule(UserNotFoundError, (e) => ({ status: 404, data: { reason: 'user_not_found', oId: e.oId } })),
  rule(NotFoundError, () => ({ status: 404, data: { reason: 'not_found' } })),
  rule(ConflictError, () => ({ status: 409, data: { reason: 'conflict' } })),
  rule(ClaimInProgressError, (e) => ({ status: 409, data: { reason: 'claim_in_progress', retryAfterSeconds: e.retryAfterSeconds } })),
  rule(ClaimLostError, () => ({ status: 409, data: { reason: 'claim_lost' } })),
  rule(ConcurrencyError, () => ({ status: 409, data: { reason: 'concurrent_update' } })),
  rule(OperationNotAppliedError, (e) => ({ status: 409, data: { reason: 'operation_not_applied', operationId: e.operationId, contradicted: e.contradicted } })),
  rule(PayloadTooLargeError, () => ({ status: 413, data: { reason: 'payload_too_large' } })),
  rule(RecordTooLargeError, () => ({ status: 413, data: { reason: 'payload_too_large' } })),
  rule(IdempotencyKeyReusedError, () => ({ status: 422, data: { reason: 'idempotency_key_reused' } })),
  rule(PlatformRejectedError, (e) => ({ status: 422, data: { reason: 'platform_rejected', platformMessage: e.platformMessage } })),
  rule(RateLimitedError, (e) => ({ status: 429, data: { reason: 'rate_limited', retryAfterSeconds: e.retryAfterSeconds } })),
  rule(PlatformUnavailableError, () => ({ status: 502, data: { reason: 'platform_failed' } })),
  rule(PlatformTimeoutError, () => ({ status: 504, data: { reason: 'platform_timeout' } })),
  // 504 when the platform never answered, 502 when it answered something that says nothing.
  rule(OutcomeUnknownError, (e) => ({
    status: e.noAnswer ? 504 : 502,
    data: { reason: 'outcome_unknown', operationId: e.operationId, status: e.operationStatus },
  })),
  rule(NotConfiguredError, () => ({ status: 503, data: { reason: 'not_configured' } })),
  rule(StoreUnavailableError, (e) => ({ status: 503, data: { reason: 'store_unavailable', retryAfterSeconds: e.retryAfterSeconds } })),
]);

const INTERNAL: Answer = { status: 500, data: { reason: 'internal_error' } };

function answerOf(error: AppError): Answer {
  // Up the error's classes, from its own to the first below AppError.
  for (let type = error.constructor as ErrorClass<AppError>; type !== AppError; type = Object.getPrototypeOf(type) as ErrorClass<AppError>) {
    const answer = RULES.get(type);
    if (answer) return answer(error);
  }
  return INTERNAL;
}

/** Messages that would name internals (streams, revisions) get a message for the caller instead. */
function publicMessage(error: AppError): string {
  if (error instanceof ConcurrencyError) return 'The record was changed by concurrent requests for too long; retry the request';
  return error.message;
}

export type OnUnexpected = (error: unknown, path: string) => void;

export function statusOf(error: AppError): number {
  return answerOf(error).status;
}

/** Errors koa-body and koa raise themselves, expressed in the service's own terms. */
function fromFramework(error: unknown, maxBodyBytes: number): AppError | undefined {
  const e = error as { status?: number; type?: string; expose?: boolean; message?: string };
  if (e.status === 413 || e.type === 'entity.too.large') return new PayloadTooLargeError(`body: larger than the ${formatBytes(maxBodyBytes)} the service accepts`);
  if (e.status === 400 && (e.type === 'entity.parse.failed' || e instanceof SyntaxError)) return invalid('body', 'malformed JSON');
  if (e.status === 415) return invalid('body', 'unsupported content type');
  return undefined;
}

/** Writes an answer; a reason that says when to come back says it in `Retry-After` too. */
function send(ctx: Context, answer: Answer, message: string): void {
  ctx.status = answer.status;
  if ('spec' in answer) {
    ctx.body = { code: answer.status, message, data: {} };
    return;
  }
  if ('retryAfterSeconds' in answer.data && answer.data.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(answer.data.retryAfterSeconds));
  ctx.body = { code: answer.status, message, data: answer.data };
}

/** Writes the answer for an error onto ctx; an error the service did not expect is logged, never shown. */
export type RenderError = (ctx: Context, thrown: unknown) => void;

export function errorRenderer(onUnexpected: OnUnexpected, maxBodyBytes: number): RenderError {
  return (ctx, raised) => {
    const thrown = failureOf(raised);
    const error = thrown instanceof AppError ? thrown : fromFramework(thrown, maxBodyBytes);
    if (!error) {
      onUnexpected(thrown, ctx.path);
      send(ctx, INTERNAL, 'Internal error: the service could not complete the request');
      return;
    }
    // The spec's 403 body stays as it is; the permission the key lacks goes in a header.
    if (error instanceof PermissionDeniedError && error.permission) ctx.set(MISSING_PERMISSION_HEADER, error.permission);
    send(ctx, answerOf(error), publicMessage(error));
  };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** `Retry-After` as whole seconds, when the answer has one. */
function retryAfter(ctx: Context): number | undefined {
  const seconds = Number(ctx.response.get('Retry-After'));
  return Number.isInteger(seconds) && seconds >= 1 ? seconds : undefined;
}

/**
 * The reason of an error body a handler wrote itself rather than threw: the realtime streams'
 * admission refusals (429 for the address, 503 for the node or a shutdown).
 */
function handlerWritten(ctx: Context): ErrorAnswer | undefined {
  const seconds = retryAfter(ctx);
  if (ctx.status === 429 && seconds !== undefined) return { status: 429, data: { reason: 'too_many_connections', retryAfterSeconds: seconds } };
  if (ctx.status === 503) return { status: 503, data: { reason: 'unavailable', ...(seconds !== undefined && { retryAfterSeconds: seconds }) } };
  return undefined;
}

export function errorMiddleware(render: RenderError): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status < 400) return;
      // Answers nobody wrote a body for (no route, a method the route does not take) get the
      // error form too, not koa's plain-text status line.
      if (ctx.body == null) {
        const status = ctx.status;
        if (status === 404) return send(ctx, { status, data: { reason: 'route_not_found' } }, `No route for ${ctx.method} ${ctx.path}`);
        const allowed = ctx.response.get('Allow');
        const message = status === 405 ? `Method ${ctx.method} is not allowed for ${ctx.path} (allowed: ${allowed})` : `Cannot ${ctx.method} ${ctx.path}`;
        if (status === 405 || status === 501) return send(ctx, { status, data: { reason: 'method_not_allowed' } }, message);
        // An error status with nothing to say is the service's own failure.
        send(ctx, INTERNAL, message);
        return;
      }
      // An error body in the service's form that a handler wrote without a reason gets its reason.
      const body = ctx.body as unknown;
      if (isObject(body) && body.code === ctx.status && typeof body.message === 'string' && isObject(body.data) && !('reason' in body.data)) {
        const answer = handlerWritten(ctx);
        if (answer) send(ctx, answer, body.message);
      }
    } catch (thrown) {
      render(ctx, thrown);
    }
  };
}
