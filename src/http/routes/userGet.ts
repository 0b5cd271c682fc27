// Spec §4.9: who is behind a client_id, for a game server holding an API key.
import * as v from 'valibot';
import { userFromStore } from '../../realtime/sessions.js';
import { toLookupUser } from '../../realtime/specUser.js';
import type { HttpDeps } from '../deps.js';
import type { AdminGuards, AdminState } from '../middleware/admin.js';
import { exactRouter } from '../router.js';
import { parse } from '../validation.js';

export const UserGetQuery = v.object(
  { client_id: v.pipe(v.string('must be a string'), v.trim(), v.nonEmpty('must not be empty'), v.maxLength(128, 'must be at most 128 characters')) },
  'must be an object',
);

/** The spec's exact body for an unknown or disconnected client. */
export const CLIENT_NOT_FOUND = { data: {}, message: 'Client not found or disconnected.', status: 404 } as const;

export function userGetRouter({ store, readModels, realtime }: HttpDeps, guards: AdminGuards) {
  const router = exactRouter<AdminState>('/adm/user');

  router.get('/get', ...guards.read('user:get'), async (ctx) => {
    const { client_id: clientId } = parse(UserGetQuery, ctx.query);
    const client = await realtime.clients.find(clientId);
    const bound = client?.user;
    const user = bound && (readModels.users.byUserId(bound.userId) ?? (await userFromStore(store, bound.oId)));
    if (!client) {
      ctx.status = 404;
      ctx.body = CLIENT_NOT_FOUND;
    } else if (!user) {
      ctx.body = { code: 0, msg: 'success', data: { authenticated: false, clientId } };
    } else {
      ctx.body = { code: 0, msg: 'success', data: { authenticated: true, clientId, user: toLookupUser(user) } };
    }
  });

  return router;
}
