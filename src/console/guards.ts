// What every console API request must bring: a live console session of an account CONSOLE_ADMINS
// still lists; and for every change, the session's token and a page on PUBLIC_URL's origin.
import type { Middleware } from 'koa';
import { ForeignOriginError } from '../http/errors.js';
import type { WorkState } from '../http/middleware/requestLog.js';
import type { ConsoleCookies } from './cookies.js';
import { ConsoleSignInRequiredError, ConsoleTokenError, NotAnOperatorError } from './errors.js';
import { consoleOperator } from './operator.js';
import type { ConsoleSessions, OperatorSession } from './sessions.js';

export const TOKEN_HEADER = 'X-Console-Token';

export interface OperatorState extends WorkState {
  operator: OperatorSession;
}

export function requireOperator(deps: { cookies: ConsoleCookies; sessions: ConsoleSessions; admins: ReadonlySet<string> }): Middleware<OperatorState> {
  return async (ctx, next) => {
    const sessionId = deps.cookies.session(ctx.get('Cookie') || undefined);
    const session = sessionId && (await deps.sessions.live(sessionId));
    if (!session) throw new ConsoleSignInRequiredError();
    // Removed from CONSOLE_ADMINS since signing in: the session no longer opens anything.
    if (!deps.admins.has(session.oId)) throw new NotAnOperatorError();
    ctx.state.operator = session;
    // What the request appends names the operator, as the events' `by` does.
    ctx.state.work.asOperator(consoleOperator(session.oId).name);
    await next();
  };
}

/**
 * A change must come from a console page: its Origin is PUBLIC_URL's — browsers send Origin with
 * every POST, and the console is served nowhere else — and it carries the token only the session's
 * pages could read. The Host header is not trusted for this: any name that resolves to the service
 * (a rebinding one included) would make its own pages "the service's".
 */
export function requireConsolePage(deps: { cookies: ConsoleCookies; publicUrl: () => string }): Middleware<OperatorState> {
  return async (ctx, next) => {
    if (ctx.method !== 'GET') {
      const origin = ctx.get('Origin');
      if (origin !== new URL(deps.publicUrl()).origin) throw new ForeignOriginError(origin || '(none)');
      if (!deps.cookies.isCsrfToken(ctx.state.operator.sessionId, ctx.get(TOKEN_HEADER) || undefined)) throw new ConsoleTokenError();
    }
    await next();
  };
}
