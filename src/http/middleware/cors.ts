// CORS for browser pages on the listed origins (CORS_ORIGINS), with credentials: the realtime
// stream and logout carry the session cookie.
import type { Middleware } from 'koa';

/** The headers that let a page on `origin` read the answer with credentials, when it is listed. */
export function allowOriginHeaders(allowed: ReadonlySet<string>, origin: string): Record<string, string> | undefined {
  return origin !== '' && allowed.has(origin) ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true' } : undefined;
}

export function cors(origins: readonly string[]): Middleware {
  const allowed = new Set(origins);
  return (ctx, next) => {
    ctx.vary('Origin');
    const headers = allowOriginHeaders(allowed, ctx.get('Origin'));
    const ok = headers !== undefined;
    if (ok) ctx.set(headers);
    if (ctx.method === 'OPTIONS') {
      if (ok) {
        ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        ctx.set('Access-Control-Allow-Headers', 'Last-Event-ID, Content-Type, Cache-Control');
        ctx.set('Access-Control-Max-Age', '600');
      }
      ctx.status = 204;
      return;
    }
    return next();
  };
}
