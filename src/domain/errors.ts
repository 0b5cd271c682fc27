// One error hierarchy for the whole service. Each class says what went wrong in domain words and
// keeps, as typed fields, what a caller needs to act on it; src/http/middleware/errors.ts is the
// single place that maps a class to an HTTP status and a `data.reason` (src/contract/answers.ts).
import type { Permission } from './permissions.js';

export abstract class AppError extends Error {
  /** Extra, safe-to-show details (e.g. validation issues). Never a stack or a secret. */
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
}

/** One problem with the input: the field (a dot path, `body` for the whole input) and what is wrong. */
export interface FieldIssue {
  field: string;
  message: string;
}

/** Input that breaks a rule: a wrong type, a missing field, an impossible date. */
export class ValidationError extends AppError {
  /** Every problem; without a list, the message (`<field>: <problem>`) is the one problem. */
  readonly issues: FieldIssue[];
  constructor(message: string, details: { issues?: FieldIssue[] } = {}) {
    const issues = details.issues && details.issues.length > 0 ? details.issues : [issueOf(message)];
    super(message, { issues });
    this.issues = issues;
  }
}

function issueOf(message: string): FieldIssue {
  const colon = message.indexOf(': ');
  return colon > 0 ? { field: message.slice(0, colon), message: message.slice(colon + 2) } : { field: 'body', message };
}

/** The API key is missing, unknown, disabled or expired (the spec answers all of them alike). */
export class InvalidApiKeyError extends AppError {
  constructor() {
    super('Invalid apiKey');
  }
}

/** The API key is valid but lacks the permission the endpoint needs. */
export class PermissionDeniedError extends AppError {
  /** `permission`: the one the key lacks, when a key was checked for one (answered in a header, never in the spec's body). */
  constructor(readonly permission?: Permission) {
    super('No permission to access this resource');
  }
}

export class NotFoundError extends AppError {}

/** The platform has no user with this oId. */
export class UserNotFoundError extends NotFoundError {
  constructor(readonly oId: string) {
    super(`No user with oId ${oId} on the community platform`);
  }
}

/** The request is valid but conflicts with the current state (e.g. a deduction below zero). */
export class ConflictError extends AppError {}

/** Another request with the same Idempotency-Key is still running: this one may be sent again later. */
export class ClaimInProgressError extends ConflictError {
  constructor(readonly retryAfterSeconds: number) {
    super('Idempotency-Key: a request with this key is still being processed; retry in a few seconds');
  }
}

/** The same Idempotency-Key was sent again with a different request. */
export class IdempotencyKeyReusedError extends AppError {}

/**
 * Refused before the request ran (the transport's own limits: body size, rate, origin): nothing
 * was recorded or sent. The HTTP layer defines the kinds.
 */
export abstract class RequestRefusedError extends AppError {}

/** The events to record are more than the event store takes in one append. */
export class RecordTooLargeError extends AppError {}

/** The community platform answered and refused the operation (its `code:-1` with a message). */
export class PlatformRejectedError extends AppError {
  constructor(readonly platformMessage: string) {
    super(`The community platform refused the operation: ${platformMessage}`);
  }
}

/**
 * The community platform could not be used: connection refused, an HTTP error, an answer that
 * could not be understood. `sent` tells whether the request may have reached the platform.
 */
export class PlatformUnavailableError extends AppError {
  constructor(
    reason: string,
    readonly sent: boolean,
  ) {
    super(`The community platform failed: ${reason}`);
  }
}

/** The platform did not answer in time: a write may or may not have happened. */
export class PlatformTimeoutError extends AppError {
  constructor(timeoutMs: number) {
    super(`The community platform did not answer within ${timeoutMs} ms`);
  }
}

/**
 * A platform operation was sent (or may have been) and its result is not known. It is never sent
 * again on its own: the platform's answer arriving late, or an operator's resolution, settles it.
 */
export class OutcomeUnknownError extends AppError {
  /** `noAnswer`: the platform never answered (a gateway timeout), rather than answering badly. */
  constructor(
    readonly operationId: string,
    readonly operationStatus: 'pending' | 'unknown',
    reason: string,
    readonly noAnswer = true,
  ) {
    super(
      `Outcome unknown: ${reason}. Operation ${operationId} will not be sent again; check the user on the platform, or ask an operator to resolve it, before sending a new request`,
      { operationId, status: operationStatus },
    );
  }
}

/**
 * The event store could not be reached or did not answer in time (a refused, terminated, timed
 * out or exhausted connection). A write it interrupted may or may not have been recorded: a
 * retry with the same Idempotency-Key finds out which; the node answers again once the store does.
 */
export class StoreUnavailableError extends AppError {
  readonly retryAfterSeconds = 1;
  constructor(override readonly cause: unknown) {
    super('The event store is unavailable: the request may not have been recorded; retry it (with the same Idempotency-Key) in a moment');
  }
}

/** What the store itself said of a failure (which connection failed, how), for logs and operators. */
export function storeFailureMessage(error: unknown): string {
  const cause = error instanceof StoreUnavailableError ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/** An operator checked the platform and found that the operation did not happen. */
export class OperationNotAppliedError extends AppError {
  /** `contradicted`: the platform said afterwards that it applied it: sending it again may apply it twice. */
  constructor(
    readonly operationId: string,
    resolvedBy: string,
    note: string,
    readonly contradicted = false,
  ) {
    const next = contradicted ? 'check the user on the platform before sending it again' : 'send it again with a new Idempotency-Key';
    super(`Operation ${operationId} was not applied (resolved by ${resolvedBy}${note ? `: ${note}` : ''}); ${next}`, { operationId });
  }
}

/**
 * A setting the operation needs is missing on this service (not a platform failure): the
 * operator must set it. Nothing was recorded or sent.
 */
export class NotConfiguredError extends AppError {}

/** Optimistic concurrency: the stream moved on since it was read. */
export class ConcurrencyError extends AppError {
  constructor(
    readonly streamName: string,
    readonly expected: number | 'no_stream',
    readonly actual: number | 'no_stream',
  ) {
    super(`Stream ${streamName} was changed concurrently (expected revision ${expected}, found ${actual})`);
  }
}

/**
 * A failure in a step that precedes every change the request makes (the lookup before a write,
 * recording the intent before sending), whatever its kind: a timeout there is a 504 all the same,
 * but a retry is safe. It carries the failure itself, which is what callers answer and classify.
 */
export class BeforeAnyChangeError extends Error {
  constructor(readonly failure: Error) {
    super(failure.message, { cause: failure });
    this.name = new.target.name;
  }
}

/** Runs a step that precedes every change: its failure becomes a BeforeAnyChangeError. */
export function beforeAnyChange<T>(call: Promise<T>): Promise<T> {
  return call.catch((error: unknown) => {
    throw error instanceof Error ? new BeforeAnyChangeError(error) : error;
  });
}

/** What went wrong, seen through a BeforeAnyChangeError: the error to answer and classify. */
export function failureOf(error: unknown): unknown {
  return error instanceof BeforeAnyChangeError ? error.failure : error;
}

/**
 * Whether a request that failed with this error surely changed nothing: rejected before it ran
 * (bad input, bad key, unknown user, a transport limit), refused before anything reached the platform,
 * or failed in a step that precedes every change (BeforeAnyChangeError).
 */
export function changedNothing(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error instanceof BeforeAnyChangeError ||
    error instanceof ValidationError ||
    error instanceof InvalidApiKeyError ||
    error instanceof PermissionDeniedError ||
    error instanceof NotFoundError ||
    error instanceof RequestRefusedError ||
    error instanceof NotConfiguredError ||
    // A conflicting append wrote nothing.
    error instanceof ConcurrencyError ||
    (error instanceof PlatformUnavailableError && !error.sent)
  );
}
