// Refusals that belong to HTTP itself: limits on what a request may be and who may send it.
import { RequestRefusedError } from '../domain/errors.js';

/** The request body is larger than the service accepts. */
export class PayloadTooLargeError extends RequestRefusedError {}

/** The key used more requests than its rate limit allows; retry after `retryAfterSeconds`. */
export class RateLimitedError extends RequestRefusedError {
  constructor(
    perSecond: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`Too many requests: this key is limited to ${perSecond} per second`);
  }
}

/** A browser request with credentials from a page on an origin the service does not trust. */
export class ForeignOriginError extends RequestRefusedError {
  constructor(origin: string) {
    super(`Origin ${origin.slice(0, 200)} may not make this request`);
  }
}
