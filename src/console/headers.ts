// Headers of every console answer (pages, assets, JSON): a policy that allows the console's own
// files and nothing else (no inline script or style, no framing), no MIME sniffing, no Referer,
// and nothing kept in caches but the versioned assets.
import type { Middleware } from 'koa';
import { contentSecurityPolicy, htmlPageHeaders } from '../http/securityHeaders.js';

export const CONSOLE_CSP = contentSecurityPolicy({
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'form-action': "'self'",
});

export const consoleHeaders: Middleware = async (ctx, next) => {
  ctx.set(htmlPageHeaders(CONSOLE_CSP));
  ctx.set('Cache-Control', 'no-store');
  await next();
};
