// `GET /`: what this is and where to go next, for a person (HTML) or a program (JSON).
import { CLI_COMMAND } from '../../cliCommand.js';
import { version } from '../../version.js';
import { exactRouter } from '../router.js';

const SERVICE = 'community-bridge';
const LINKS = { docs: '/docs', openapi: '/openapi.json', health: '/healthz', ready: '/readyz' };

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${SERVICE} ${version}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d2330}code{background:#f1f3f6;padding:.1em .3em;border-radius:3px}</style>
</head><body>
<h1>${SERVICE} <small>${version}</small></h1>
<p>Lets game servers act on the users of a community platform, and lets those users sign in and receive realtime pushes.</p>
<ul>
<li><a href="${LINKS.docs}">API reference</a> (try every call with an API key) · <a href="${LINKS.openapi}">OpenAPI document</a></li>
<li>Health: <a href="${LINKS.health}">${LINKS.health}</a> · readiness: <a href="${LINKS.ready}">${LINKS.ready}</a></li>
<li>API keys come from the operator CLI: <code>${CLI_COMMAND} keys create --app &lt;your game&gt; --permissions '*'</code></li>
</ul>
</body></html>
`;

export function homeRouter() {
  const router = exactRouter();
  router.get('/', (ctx) => {
    ctx.set('Vary', 'Accept');
    if (ctx.accepts('html', 'json') === 'json') {
      ctx.body = { service: SERVICE, version, links: LINKS };
      return;
    }
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.type = 'html';
    ctx.body = PAGE;
  });
  return router;
}
