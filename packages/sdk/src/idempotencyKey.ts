// The Idempotency-Key of a POST. The service takes 1 to 255 visible ASCII characters; a key
// outside that is refused by the service (400) or, with control characters, by fetch before
// sending. Either way no retry could mend it, so it is refused before anything is sent.

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The caller's key when given (checked), else a new random UUID. */
export function idempotencyKeyOf(given: string | undefined): string {
  if (given === undefined) return crypto.randomUUID();
  if (typeof given === 'string' && IDEMPOTENCY_KEY.test(given)) return given;
  throw new TypeError('idempotencyKey: must be 1 to 255 visible ASCII characters (no spaces or control characters)');
}
