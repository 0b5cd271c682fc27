// `GET /`: what this is and where to go next, for a person (HTML) or a program (JSON).
import type { Context } from 'koa';
import { CLI_COMMAND } from '../../cliCommand.js';
import { version } from '../../version.js';
import { contentSecurityPolicy, htmlPageHeaders, inlineSource } from '../securityHeaders.js';

export const SERVICE = 'community-bridge';
export const LINKS = { docs: '/docs', openapi: '/openapi.json', health: '/healthz', ready: '/readyz' };

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d2330}code{background:#f1f3f6;padding:.1em .3em;border-radius:3px}';
const CSP = contentSecurityPolicy({ 'style-src': inlineSource(STYLE) });

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${SERVICE} ${version}</title>
<style>${STYLE}</style>
</head><body>
<h1>${SERVICE} <small>${version}</small></h1>
<p>Lets game servers act on the users of a community platform, and lets those users sign in and receive realtime pushes.</p>
<ul>
<li><a href="${LINKS.docs}">API reference</a> (try every call with an API key) · <a href="${LINKS.openapi}">OpenAPI document</a></li>
<li>Health: <a href="${LINKS.health}">${LINKS.health}</a> · readiness: <a href="${LINKS.ready}">${LINKS.ready}</a></li>
<li>API keys come from the operator CLI: <code>${CLI_COMMAND} keys create --app-id &lt;your-game&gt; --app "&lt;Your Game&gt;" --permissions '*'</code></li>
</ul>
</body></html>
`;

/** A person gets a short page; a program asking for JSON gets the same facts as JSON. */
export function homePage(ctx: Context): void {
  ctx.set('Vary', 'Accept');
  if (ctx.accepts('html', 'json') === 'json') {
    ctx.body = { service: SERVICE, version, links: LINKS };
    return;
  }
  ctx.set(htmlPageHeaders(CSP));
  ctx.type = 'html';
  ctx.body = PAGE;
}
