// Spec §4.7, §6: the realtime stream, and logout. The stream's frames come only from the
// client's actor, through the subject the hub hands over; this handler just drains it.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { ADMISSION_RETRY_AFTER_SECONDS } from '../../realtime/admission.js';
import { hashBinding, newBinding } from '../../realtime/browserCookies.js';
import { HubClosedError } from '../../realtime/hub.js';
import { formatFrame, parseLastEventId, SSE_HEADERS } from '../../realtime/sse.js';
import type { HttpDeps } from '../deps.js';
import { requireTrustedOrigin } from '../middleware/trustedOrigin.js';

/** A client this far behind is cut off; it reconnects with Last-Event-ID and catches up. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** CORS for pages on the listed origins, with credentials (the session cookie). */
function cors(origins: readonly string[]): Middleware {
  const allowed = new Set(origins);
  return async (ctx, next) => {
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
    await next();
  };
}

export function realtimeRouter({ realtime }: HttpDeps): Router {
  const { hub, sessions, cookies, browserCookies, corsOrigins, publicUrl, log, admission } = realtime;
  const router = new Router();
  const allowOrigins = cors(corsOrigins);

  router.options('/api/realtime', allowOrigins);
  router.options('/api/logout', allowOrigins);

  router.get('/api/realtime', allowOrigins, async (ctx) => {
    const { req, res } = ctx;
    // ctx.ip: the socket's address, or with TRUST_PROXY the proxy's X-Forwarded-For entry.
    const address = ctx.ip;
    const refused = admission.admit(address);
    if (refused) {
      ctx.status = refused.status;
      ctx.set('Retry-After', String(ADMISSION_RETRY_AFTER_SECONDS));
      ctx.body = { code: refused.status, message: refused.message, data: {} };
      return;
    }
    res.once('close', () => admission.release(address));
    const cookieHeader = ctx.get('Cookie') || undefined;
    const session = await sessions.resolve(cookies.read(cookieHeader));
    // The browser's client binding (kept across its connections): its login page goes straight on.
    const binding = browserCookies.clientBinding(cookieHeader) ?? newBinding();
    ctx.append('Set-Cookie', browserCookies.issueClientBinding(binding));
    // The header, or the query for clients that cannot set headers on a new connection.
    const lastEventId = parseLastEventId(ctx.get('Last-Event-ID') || ctx.query.lastEventId);
    let gone = false;
    const onEarlyClose = () => (gone = true);
    res.once('close', onEarlyClose);
    let client;
    try {
      client = await hub.open({ session, lastEventId, opener: { ...pageOrigin(ctx.get('Origin')), browser: hashBinding(binding) } });
    } catch (error) {
      if (!(error instanceof HubClosedError)) throw error;
      ctx.status = 503;
      ctx.body = { code: 503, message: 'The service is shutting down; reconnect in a moment', data: {} };
      return;
    } finally {
      res.off('close', onEarlyClose);
    }
    ctx.respond = false;
    if (gone || res.destroyed) {
      client.close();
      return;
    }
    ctx.status = 200;
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    req.socket.setKeepAlive(true);
    res.writeHead(200, SSE_HEADERS);
    res.on('close', () => client.close());
    const open = () => !res.destroyed && !res.writableEnded;
    client.start({
      next: (frame) => {
        if (!open()) return;
        // A frame that cannot be formatted or written ends this connection only: thrown inside
        // the frames' subject, it would be rethrown asynchronously and end the process.
        try {
          res.write(formatFrame(frame));
        } catch (error) {
          log.error({ err: error, clientId: client.clientId, frame: frame.type }, 'could not write a realtime frame; closing the connection');
          res.destroy();
          return;
        }
        if (res.writableLength > MAX_BUFFERED_BYTES) res.destroy();
      },
      complete: () => {
        if (open()) res.end();
      },
      error: () => res.destroy(),
    });
  });

  router.post('/api/logout', allowOrigins, requireTrustedOrigin(corsOrigins, publicUrl), async (ctx) => {
    const sessionId = cookies.read(ctx.get('Cookie') || undefined);
    if (sessionId) await sessions.end(sessionId);
    ctx.append('Set-Cookie', cookies.clear());
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { code: 0, msg: 'success' };
  });

  return router;
}

/** The page origin that opened the stream, when the header holds one (the login page may show it). */
function pageOrigin(header: string): { origin?: string } {
  if (header.length > 200) return {};
  try {
    const url = new URL(header);
    return ['http:', 'https:'].includes(url.protocol) && url.origin === header ? { origin: header } : {};
  } catch {
    return {};
  }
}
