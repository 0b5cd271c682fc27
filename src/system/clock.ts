// The time, passed in wherever it is needed so that tests control it.

export interface Clock {
  /** Now, as an ISO-8601 UTC string. */
  now(): string;
}

export const systemClock: Clock = { now: () => new Date().toISOString() };
