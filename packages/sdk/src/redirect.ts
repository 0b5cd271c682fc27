// Redirects are not followed: every admin request carries the apiKey, and following a redirect to
// another origin would hand the key, and a POST's body, to whoever is there. A 3xx becomes an
// error naming where it pointed: the origin only, as a Location's path or query may hold anything.
import { BridgeRedirectError } from './errors.js';
import type { Redactor } from './redact.js';
import type { FetchResponse } from './transport.js';

/** A 3xx, or the opaque answer a browser gives in its place (status 0, where it went hidden). */
export function isRedirect(response: FetchResponse): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
}

export function redirectError(
  response: FetchResponse,
  context: { requestUrl: string; origin: string; redact: Redactor; requestId: string; idempotencyKey: string | undefined },
): BridgeRedirectError {
  // Nothing of it is read: the request is over.
  response.body?.cancel().catch(() => undefined);
  const hidden = response.type === 'opaqueredirect';
  const status = hidden ? undefined : response.status;
  const location = hidden ? null : response.headers.get('location');
  const target = location === null ? undefined : originOf(location, context.requestUrl);
  const locationOrigin = target === undefined ? undefined : context.redact.text(target);
  const where = hidden ? 'a redirect (the browser hides where to)' : `HTTP ${status} ${location === null ? 'with no Location' : `to ${nameOf(locationOrigin)}`}`;
  const message = `Redirect not followed: ${where}; the apiKey is sent to ${context.redact.text(context.origin)} only (set baseUrl to the service's own address)`;
  return new BridgeRedirectError(message, { status, locationOrigin, requestId: context.requestId, idempotencyKey: context.idempotencyKey });
}

/** The Location's origin: 'null' for a scheme without one (data:, file:, …), undefined for no URL at all. */
function originOf(location: string, requestUrl: string): string | undefined {
  try {
    return new URL(location, requestUrl).origin;
  } catch {
    return undefined;
  }
}

function nameOf(origin: string | undefined): string {
  if (origin === undefined) return 'a Location that is not a URL';
  return origin === 'null' ? 'a URL with no origin' : origin;
}
