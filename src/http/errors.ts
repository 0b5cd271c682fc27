// Refusals that belong to HTTP itself: limits on what a request may be and who may send it.
import { RequestRefusedError } from '../domain/errors.js';

/** The request body is larger than the service accepts. */
export class PayloadTooLargeError extends RequestRefusedError {}

/** The key used more requests than its rate limit allows, or its app has as many in progress as it may; retry after `retryAfterSeconds`. */
export class RateLimitedError extends RequestRefusedError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** A browser request with credentials from a page on an origin the service does not trust. */
export class ForeignOriginError extends RequestRefusedError {
  constructor(origin: string) {
    super(`Origin ${origin.slice(0, 200)} may not make this request`);
  }
}
