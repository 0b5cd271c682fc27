// Headers of the HTML pages the service serves (sign-in pages, /docs) and of the dev demo page:
// a Content-Security-Policy that lists exactly what each page loads and forbids framing, no MIME
// sniffing, no Referer (sign-in URLs carry the state and the assertion).
import { hash } from 'node:crypto';
import type { Middleware } from 'koa';

/** `'sha256-…'` source of an inline script or style, for a policy that allows just that one. */
export const inlineSource = (text: string) => `'sha256-${hash('sha256', text, 'base64')}'`;

/**
 * A policy that denies everything it does not name, and framing by anyone. `directives` maps a
 * directive (`script-src`) to its sources (`'self'`).
 */
export function contentSecurityPolicy(directives: Record<string, string> = {}): string {
  const all = { 'default-src': "'none'", 'base-uri': "'none'", 'form-action': "'none'", 'frame-ancestors': "'none'", ...directives };
  return Object.entries(all)
    .map(([name, sources]) => `${name} ${sources}`)
    .join('; ');
}

/** Headers every HTML page carries, as a plain object (for node:http servers too). */
export function htmlPageHeaders(csp: string): Record<string, string> {
  return {
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
}

/** Every answer: never sniffed into another type (a JSON error echoing input is not HTML). */
export const noSniff: Middleware = (ctx, next) => {
  ctx.set('X-Content-Type-Options', 'nosniff');
  return next();
};
