/** What the service says about a failure: `data` of its `{code, message, data}` error body. */
export interface BridgeErrorData {
  /** 400: every problem with the request, by field. */
  issues?: Array<{ field: string; message: string }>;
  /** 502/504 on a write: the platform operation whose outcome is unknown (it is never sent again). */
  operationId?: string;
  [key: string]: unknown;
}

/**
 * A call that did not succeed. `status` is the HTTP status of the service's answer, or 0 when
 * no answer came (the network failed, or `timeoutMs` passed).
 */
export class BridgeError extends Error {
  override readonly name: string = 'BridgeError';
  readonly status: number;
  readonly data: BridgeErrorData;
  /** The Idempotency-Key the call was sent with (POSTs): a later retry with it cannot apply the request twice. */
  readonly idempotencyKey: string | undefined;

  constructor(status: number, message: string, data: BridgeErrorData = {}, options: { idempotencyKey?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.data = data;
    this.idempotencyKey = options.idempotencyKey;
  }
}

/**
 * The service's address answered with a redirect, which is not followed: the request carries the
 * apiKey, and the key goes to `baseUrl`'s origin only. `status` is the redirect's (0 in a browser,
 * which hides it). Point `baseUrl` at the service itself.
 */
export class BridgeRedirectError extends BridgeError {
  override readonly name: string = 'BridgeRedirectError';
  /** Where the redirect pointed: its origin only (`'null'` for a scheme without one), undefined when it named no URL. */
  readonly locationOrigin: string | undefined;

  constructor(status: number, message: string, locationOrigin: string | undefined, options: { idempotencyKey?: string } = {}) {
    super(status, message, {}, options);
    this.locationOrigin = locationOrigin;
  }
}
