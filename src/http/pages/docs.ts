// `GET /docs`: a Swagger UI page of `/openapi.json`, whose assets the service serves itself from
// the swagger-ui-dist package (no CDN, nothing fetched elsewhere).
import type { Context } from 'koa';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { contentSecurityPolicy, htmlPageHeaders } from '../securityHeaders.js';

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files served under /docs/assets/: a fixed list, so no path ever reaches the disk. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui.css.map': 'application/json',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

// A file of its own rather than an inline script, so a strict Content-Security-Policy can allow it.
// validatorUrl null: Swagger UI would otherwise load a badge from an outside validator.
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

// Only the service's own files; Swagger UI shows its SVG icons as data: images and calls the API for "Try it out".
const DOCS_CSP = contentSecurityPolicy({
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
});

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>community-bridge API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <noscript><p>This page needs JavaScript. The description itself is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>
`;

const cache = new Map<string, Buffer>();

/** The Swagger UI page, which loads `/openapi.json`. */
export function docsPage(ctx: Context): void {
  ctx.set(htmlPageHeaders(DOCS_CSP));
  ctx.type = 'html';
  ctx.body = PAGE;
}

/** One of the page's own files, by name; false when there is no such file. */
export async function docsAsset(ctx: Context, file: string): Promise<boolean> {
  if (file === 'init.js') {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = INIT_SCRIPT;
    return true;
  }
  const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
  if (!type) return false;
  let content = cache.get(file);
  if (!content) {
    content = await readFile(join(SWAGGER_UI_DIR, file));
    cache.set(file, content);
  }
  ctx.type = type;
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = content;
  return true;
}
