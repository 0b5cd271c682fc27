// Cookie-authenticated writes (logout) from a browser: the page that sends one must be on
// PUBLIC_URL's origin or one listed in CORS_ORIGINS. Browsers always send Origin on a cross-origin
// POST, so a request without one is not a cross-site forgery (curl, a server); `null` (sandboxed
// frames, opaque origins) is refused. The Host header is never taken for the service's origin: a
// page on any name that resolves to the service (a rebinding one included) would pass.
import type { Middleware } from 'koa';
import { ForeignOriginError } from '../errors.js';

export function requireTrustedOrigin(trusted: readonly string[], publicUrl: () => string): Middleware {
  const listed = new Set(trusted);
  return (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin !== '' && origin !== new URL(publicUrl()).origin && !listed.has(origin)) throw new ForeignOriginError(origin);
    return next();
  };
}
