// When a call is sent again, and after how long. Only a failure that sending again can mend is:
// no answer; a 502/504 that says nothing was changed (or, from a proxy, says nothing at all); a
// 409 `concurrent_update`; and, after the wait their Retry-After asks for, a 429, a 503 and a 409
// `claim_in_progress` (an earlier attempt with the same Idempotency-Key is still running). An
// `outcome_unknown` never is: the service will not send that write again, so the same answer
// would come back. Anything else is the service's answer to this very request.

/** Backoff is random in [0, min(MAX_BACKOFF_MS, BACKOFF_BASE_MS · 2^attempt)] ("full jitter"). */
const BACKOFF_BASE_MS = 250;
/** Backoff stops growing here: the call's deadline, not the attempt count, bounds the waiting. */
const MAX_BACKOFF_MS = 10_000;
/** Retry-After, in seconds, as far as it is read; a longer one exceeds every deadline anyway. */
const RETRY_AFTER = /^\d{1,9}$/;

export interface RetryFacts {
  status: number;
  /** The answer's `data.reason`, when it has one. */
  reason: string | undefined;
  /** The answer's Retry-After (or `data.retryAfterSeconds`), in seconds. */
  retryAfterSeconds: number | undefined;
}

/**
 * How long to wait after the nth attempt's answer before sending again, or undefined when the
 * answer stands. A wait asked for by Retry-After is the least one: the jitter may add to it.
 */
export function retryDelay(answer: RetryFacts, attempt: number, random: () => number = Math.random): number | undefined {
  const { status, reason } = answer;
  if (reason === 'outcome_unknown') return undefined;
  if (status === 502 || status === 504 || (status === 409 && reason === 'concurrent_update')) return backoff(attempt, random);
  const asked = status === 429 || status === 503 || (status === 409 && reason === 'claim_in_progress');
  // Without a Retry-After these say nothing of when it would work (a 503 `not_configured` needs an operator).
  if (!asked || answer.retryAfterSeconds === undefined) return undefined;
  return Math.max(answer.retryAfterSeconds * 1000, backoff(attempt, random));
}

/** How long to wait after the nth attempt (1 for the first) got no answer, or a backoff answer. */
export function backoff(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * (ceiling + 1));
}

/** A Retry-After header in seconds; undefined for none, an HTTP date, or anything else. */
export function retryAfterSecondsOf(header: string | null): number | undefined {
  if (header === null || !RETRY_AFTER.test(header.trim())) return undefined;
  return Number(header.trim());
}
