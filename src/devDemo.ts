// The demo web client of `npm run dev`: a page like a game's, on an origin of its own, that
// holds a realtime connection with credentials and signs in through a popup, using the SDK's
// browser module (served from this origin under /sdk/). Its policy allows scripts from this
// origin and its own inline script and style (by hash), and connections to the service only.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { contentSecurityPolicy, htmlPageHeaders, inlineSource } from './http/securityHeaders.js';

/** The SDK's built modules by URL path (`/sdk/index.js`, …); `npm ci` builds them. */
function sdkModules(): Map<string, string> {
  const dist = fileURLToPath(new URL('.', import.meta.resolve('@community-bridge/sdk')));
  const names = readdirSync(dist).filter((name) => name.endsWith('.js'));
  return new Map(names.map((name) => [`/sdk/${name}`, readFileSync(`${dist}/${name}`, 'utf8')]));
}

export function createDemoServer(options: { serviceUrl: string; communityName: string }): Server {
  const page = readFileSync(new URL('./devDemo.html', import.meta.url), 'utf8')
    .replace("'SERVICE_URL'", JSON.stringify(options.serviceUrl))
    .replace("'COMMUNITY_NAME'", JSON.stringify(options.communityName));
  const modules = sdkModules();
  const inline = (tag: string) => [...page.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((match) => inlineSource(match[1]!)).join(' ');
  const pageHeaders = {
    'content-type': 'text/html; charset=utf-8',
    ...htmlPageHeaders(contentSecurityPolicy({ 'script-src': `'self' ${inline('script')}`, 'style-src': inline('style'), 'connect-src': new URL(options.serviceUrl).origin })),
  };
  const moduleHeaders = { 'content-type': 'text/javascript; charset=utf-8', 'x-content-type-options': 'nosniff' };
  return createServer((req, res) => {
    const sdkModule = modules.get(new URL(req.url ?? '/', 'http://demo').pathname);
    if (sdkModule !== undefined) res.writeHead(200, moduleHeaders).end(sdkModule);
    else res.writeHead(200, pageHeaders).end(page);
  });
}
