// What a failed call throws: one class per way a caller handles it, all of them BridgeError.
// `reason` is what to match on (the service's closed list, or the client's own for a call that got
// no usable answer); `message` is for people and may change.
import type { components } from './generated/openapi.js';

type ErrorData = components['schemas']['ErrorBody']['data'];

/** Every `data.reason` the service answers with (its closed list, from its OpenAPI document). */
export type ServiceErrorReason = Extract<ErrorData, { reason: string }>['reason'];
/** Why a call failed on the client's side: no answer came (or not in time), the answer was a redirect, or larger than the client reads. */
export type ClientErrorReason = 'connection_failed' | 'timeout' | 'redirect' | 'answer_too_large';
export type BridgeErrorReason = ServiceErrorReason | ClientErrorReason;

/** What the service says about a failure: `data` of its `{code, message, data}` error body. */
export interface BridgeErrorData {
  reason?: string;
  /** 400: every problem with the request, by field. */
  issues?: Array<{ field: string; message: string }>;
  /** outcome_unknown, operation_not_applied: the platform operation. */
  operationId?: string;
  /** 409 claim_in_progress, 429, 503 not_ready: as the Retry-After header. */
  retryAfterSeconds?: number;
  [key: string]: unknown;
}

export interface BridgeErrorInit {
  /** The answer's HTTP status; absent when no answer came. */
  status?: number | undefined;
  reason?: BridgeErrorReason | undefined;
  requestId?: string | undefined;
  data?: BridgeErrorData | undefined;
  idempotencyKey?: string | undefined;
  cause?: unknown;
}

/**
 * A call that did not succeed: the class for anything no subclass names (a 404, a 409 other than
 * a running claim, a 5xx…), and the parent of every other.
 */
export class BridgeError extends Error {
  override readonly name: string = 'BridgeError';
  /** The HTTP status of the service's answer; undefined when no answer came (ConnectionError) or a browser hid a redirect's. */
  readonly status: number | undefined;
  /**
   * The service's `data.reason` (one of its closed list), or the client's: `connection_failed`,
   * `timeout`, `redirect`. Undefined for an answer that names none: the spec's own 401 and 403,
   * or an answer that is not the service's (a proxy's error page).
   */
  readonly reason: BridgeErrorReason | undefined;
  /**
   * The answer's X-Request-Id, else the one the client sent: every admin call sends its own, the
   * same on each retry, so it is there even when no answer came. The service logs and records it.
   */
  readonly requestId: string | undefined;
  readonly data: BridgeErrorData;
  /** The Idempotency-Key the call was sent with (POSTs): a later retry with it cannot apply the request twice. */
  readonly idempotencyKey: string | undefined;

  constructor(message: string, init: BridgeErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.reason = init.reason;
    this.requestId = init.requestId;
    this.data = init.data ?? {};
    this.idempotencyKey = init.idempotencyKey;
  }
}

/** 401: the apiKey is unknown, revoked or expired. */
export class AuthError extends BridgeError {
  override readonly name: string = 'AuthError';
}

/** 403: the apiKey lacks the endpoint's permission (or, in a browser, the page's origin is not allowed). */
export class PermissionError extends BridgeError {
  override readonly name: string = 'PermissionError';
}

/** 400: the request is invalid; nothing ran. */
export class ValidationError extends BridgeError {
  override readonly name: string = 'ValidationError';
  /** Every problem, by field (`body` for the whole body). */
  readonly issues: ReadonlyArray<{ field: string; message: string }>;

  constructor(message: string, init: BridgeErrorInit & { issues: ReadonlyArray<{ field: string; message: string }> }) {
    super(message, init);
    this.issues = init.issues;
  }
}

/** 429: over the key's rate limit, still after the waits the call's deadline allowed; nothing ran. */
export class RateLimitError extends BridgeError {
  override readonly name: string = 'RateLimitError';
  /** The answer's Retry-After: how long to wait before sending it again. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, init: BridgeErrorInit & { retryAfterSeconds: number | undefined }) {
    super(message, init);
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/**
 * 502/504 `outcome_unknown`: a write was sent, or may have been, and its result is not known. It
 * is thrown at the first such answer, never retried: the service will not send the write again,
 * whatever key it comes with. Keep `operationId` for an operator, who checks the platform and
 * resolves it; the same Idempotency-Key then answers what they found.
 */
export class OutcomeUnknownError extends BridgeError {
  override readonly name: string = 'OutcomeUnknownError';
  readonly operationId: string;
  /** `unknown`: sent, no usable answer; `pending`: the service could not record what happened. */
  readonly operationStatus: 'unknown' | 'pending';

  constructor(message: string, init: BridgeErrorInit & { operationId: string; operationStatus: 'unknown' | 'pending' }) {
    super(message, init);
    this.operationId = init.operationId;
    this.operationStatus = init.operationStatus;
  }
}

/**
 * The platform refused (422 `platform_rejected`, its own message in `platformMessage`), failed
 * (502 `platform_failed`) or did not answer a read in time (504 `platform_timeout`). In each case
 * nothing happened; the last two were retried while the deadline allowed.
 */
export class PlatformError extends BridgeError {
  override readonly name: string = 'PlatformError';
  /** platform_rejected: the platform's own message (e.g. 积分不足). */
  readonly platformMessage: string | undefined;

  constructor(message: string, init: BridgeErrorInit & { platformMessage: string | undefined }) {
    super(message, init);
    this.platformMessage = init.platformMessage;
  }
}

/**
 * No answer came: the connection was refused or reset (`connection_failed`), or `timeoutMs`
 * passed (`timeout`). `status` is undefined. A POST's fate is open: send it again later with
 * `idempotencyKey`, which cannot apply it twice.
 */
export class ConnectionError extends BridgeError {
  override readonly name: string = 'ConnectionError';
}

/**
 * The answer's body was larger than `maxAnswerBytes` (by its Content-Length, or as it arrived):
 * the client stopped reading it and did not retry. `status` is the answer's; `reason` is
 * `answer_too_large`. No answer of the service comes near the default (4 MiB): something else
 * answers at `baseUrl`, or the bound is set too low for the call.
 */
export class AnswerTooLargeError extends BridgeError {
  override readonly name: string = 'AnswerTooLargeError';
  /** The bound the answer was past, in bytes. */
  readonly maxAnswerBytes: number;

  constructor(message: string, init: BridgeErrorInit & { maxAnswerBytes: number }) {
    super(message, { ...init, reason: 'answer_too_large' });
    this.maxAnswerBytes = init.maxAnswerBytes;
  }
}

/**
 * The service's address answered with a redirect, which is not followed: the request carries the
 * apiKey, and the key goes to `baseUrl`'s origin only. `status` is the redirect's (undefined in a
 * browser, which hides it); `reason` is `redirect`. Point `baseUrl` at the service itself.
 */
export class BridgeRedirectError extends BridgeError {
  override readonly name: string = 'BridgeRedirectError';
  /** Where the redirect pointed: its origin only (`'null'` for a scheme without one), undefined when it named no URL. */
  readonly locationOrigin: string | undefined;

  constructor(message: string, init: BridgeErrorInit & { locationOrigin: string | undefined }) {
    super(message, { ...init, reason: 'redirect' });
    this.locationOrigin = init.locationOrigin;
  }
}
