// Who is signed in to the console (with the token for changes), and logout.
import type { Done, Me } from '../../contract/console.js';
import { consoleRoute } from './consoleRoute.js';

export const sessionEndpoints = [
  consoleRoute({
    method: 'get',
    path: '/console/api/me',
    handle(ctx, _input, { cookies, readModels }): Me {
      const { operator } = ctx.state;
      const user = readModels.users.byOid(operator.oId);
      return { oId: operator.oId, name: user?.name ?? operator.oId, nickname: user?.nickname ?? '', expires: operator.expires, token: cookies.csrfToken(operator.sessionId) };
    },
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/logout',
    async handle(ctx, _input, { sessions, cookies }): Promise<Done> {
      await sessions.end(ctx.state.work, ctx.state.operator.sessionId);
      ctx.append('Set-Cookie', cookies.clearSession());
      return { ok: true };
    },
  }),
];
