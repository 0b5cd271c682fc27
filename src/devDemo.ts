// The demo web client of `npm run dev`: a page like a game's, on an origin of its own, that
// holds a realtime connection with credentials and signs in through a popup. Its policy allows
// its own inline script and style (by hash) and connections to the service only.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { contentSecurityPolicy, htmlPageHeaders, inlineSource } from './http/securityHeaders.js';

export function createDemoServer(options: { serviceUrl: string; communityName: string }): Server {
  const page = readFileSync(new URL('./devDemo.html', import.meta.url), 'utf8')
    .replace("'SERVICE_URL'", JSON.stringify(options.serviceUrl))
    .replace("'COMMUNITY_NAME'", JSON.stringify(options.communityName));
  const inline = (tag: string) => [...page.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((match) => inlineSource(match[1]!)).join(' ');
  const headers = {
    'content-type': 'text/html; charset=utf-8',
    ...htmlPageHeaders(contentSecurityPolicy({ 'script-src': inline('script'), 'style-src': inline('style'), 'connect-src': new URL(options.serviceUrl).origin })),
  };
  return createServer((_req, res) => res.writeHead(200, headers).end(page));
}
