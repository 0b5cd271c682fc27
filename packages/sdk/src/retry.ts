// When a call is sent again. Only the failures that leave the request's fate open are: no answer,
// 502 and 504 (from a proxy or from the platform), and a 409 whose Retry-After says an earlier
// attempt with the same Idempotency-Key is still running. Anything else the service answered is
// its answer to this very request; sending it again would only get the same one.

const FIRST_BACKOFF_MS = 250;
/** Backoff stops growing here: the call's deadline, not the attempt count, bounds the waiting. */
const MAX_BACKOFF_MS = 8_000;
/** A Retry-After longer than this is not waited for: the answer is returned as it is. */
const MAX_RETRY_AFTER_MS = 5_000;

/** How long to wait after an answer before sending again, or undefined when the answer stands. */
export function retryDelay(status: number, retryAfter: string | null, attempt: number): number | undefined {
  if (status === 502 || status === 504) return backoff(attempt);
  if (status !== 409) return undefined;
  const waitMs = retryAfterMs(retryAfter);
  return waitMs !== undefined && waitMs <= MAX_RETRY_AFTER_MS ? waitMs : undefined;
}

/** How long to wait after the nth attempt got no answer (or a 502/504). */
export const backoff = (attempt: number): number => Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1));

function retryAfterMs(header: string | null): number | undefined {
  if (header === null || !/^\d{1,9}$/.test(header.trim())) return undefined;
  return Number(header.trim()) * 1000;
}
