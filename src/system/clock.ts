// The time, passed in wherever it is needed so that tests control it.

export interface Clock {
  /** Now, as an ISO-8601 UTC string. */
  now(): string;
}

/**
 * `ms` (milliseconds since the epoch) read as ISO-8601 UTC strings. Requests read the clock
 * several times within one millisecond, so the string of the last millisecond read is kept: a
 * read is then a number compared, not a Date built and formatted.
 */
export function isoClock(ms: () => number): () => string {
  let lastMs = Number.NaN;
  let lastIso = '';
  return () => {
    const at = ms();
    if (at !== lastMs) {
      lastIso = new Date(at).toISOString();
      lastMs = at;
    }
    return lastIso;
  };
}

export const systemClock: Clock = { now: isoClock(Date.now) };
