// What every service needs from the outside world, passed in so tests control it.
import { randomBytes } from 'node:crypto';

export interface Clock {
  /** Now, as an ISO-8601 UTC string. */
  now(): string;
}

export const systemClock: Clock = { now: () => new Date().toISOString() };

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A 15-character [a-z0-9] id from a CSPRNG: the same shape as the record ids of the
 * PocketBase-based service this one replaces, so clients that stored those keep working.
 */
export function newRecordId(): string {
  const bytes = randomBytes(15);
  let id = '';
  // 252 = 7 × 36: rejecting larger bytes keeps every character equally likely.
  for (let i = 0; i < bytes.length; i++) {
    let b = bytes[i]!;
    while (b >= 252) b = randomBytes(1)[0]!;
    id += ID_ALPHABET[b % 36];
  }
  return id;
}
