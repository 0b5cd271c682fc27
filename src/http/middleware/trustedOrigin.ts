// Cookie-authenticated writes (logout) from a browser: the page that sends one must be the
// service's own or listed in CORS_ORIGINS. Browsers always send Origin on a cross-origin POST, so
// a request without one is not a cross-site forgery (curl, a server); `null` (sandboxed frames,
// opaque origins) is refused.
import type { Middleware } from 'koa';
import { ForeignOriginError } from '../errors.js';

export function requireTrustedOrigin(trusted: readonly string[], publicUrl: () => string): Middleware {
  const listed = new Set(trusted);
  return (ctx, next) => {
    const origin = ctx.get('Origin');
    // The service's own origin: as configured, or as this request reached it (koa's ctx.origin is the header).
    const own = origin === new URL(publicUrl()).origin || origin === `${ctx.protocol}://${ctx.host}`;
    if (origin !== '' && !own && !listed.has(origin)) throw new ForeignOriginError(origin);
    return next();
  };
}
