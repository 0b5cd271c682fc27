// CORS for browser pages on the listed origins (CORS_ORIGINS), with credentials: the realtime
// stream and logout carry the session cookie.
import type { Middleware } from 'koa';

export function cors(origins: readonly string[]): Middleware {
  const allowed = new Set(origins);
  return (ctx, next) => {
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    const ok = origin !== '' && allowed.has(origin);
    if (ok) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
    }
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
