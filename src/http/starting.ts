// What the node answers while it catches up with the log, before its read models can be trusted:
// liveness (an orchestrator must not kill a node for replaying a long log), readiness "not
// ready" (reason `starting`), and 503 with Retry-After for everything else. Plain node:http: the
// koa app and its dependencies do not exist yet.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ErrorAnswer } from '../contract/answers.js';

/** Catching up takes seconds: a retry soon after finds the node ready, or asks again. */
const RETRY_AFTER_SECONDS = 1;
const NOT_READY: ErrorAnswer = { status: 503, data: { reason: 'not_ready', retryAfterSeconds: RETRY_AFTER_SECONDS } };

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...headers });
  res.end(JSON.stringify(body));
}

export function startingResponder(): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://starting').pathname;
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && path === '/healthz') return answer(res, 200, { status: 'ok' });
    if (read && path === '/readyz') {
      return answer(res, 503, { status: 'not ready', reason: 'starting' });
    }
    const message = 'The service is starting: it is catching up with the event store; retry in a few seconds';
    answer(res, NOT_READY.status, { code: NOT_READY.status, message, data: NOT_READY.data }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  };
}
