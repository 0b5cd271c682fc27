// docs/api.md "GET /adm/user/get": who is behind a client_id, for a game server holding an API key.
import * as v from 'valibot';
import { userFromStore } from '../../realtime/sessions.js';
import { toLookupUser } from '../../realtime/specUser.js';
import { ClientNotFoundBody, UserGetAnswer } from '../../contract/answers.js';
import { route } from '../route.js';

const UserGetQuery = v.object(
  {
    client_id: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.nonEmpty('must not be empty'),
      v.maxLength(128, 'must be at most 128 characters'),
      v.description('from the `PB_CONNECT` frame'),
    ),
  },
  'must be an object',
);

/** The spec's exact body for an unknown or disconnected client. */
const CLIENT_NOT_FOUND = { data: {}, message: 'Client not found or disconnected.', status: 404 } as const;

export const clientRoutes = [
  route({
    method: 'get',
    path: '/adm/user/get',
    tag: 'realtime',
    summary: 'The user behind a realtime client id',
    access: { kind: 'apiKey', permission: 'user:get' },
    query: UserGetQuery,
    ok: { description: 'The client, signed in (with the user) or not', json: UserGetAnswer },
    answers: { 404: { description: "Unknown or disconnected client: the spec's own body", json: ClientNotFoundBody } },
    async handle(ctx, { query: { client_id: clientId } }, { store, readModels, realtime, clockReading }) {
      const client = await realtime.clients.find(clientId);
      // A client of a node that stopped (killed, cut off) is gone, though nothing recorded its end yet.
      if (!client || (client.node !== undefined && clockReading().stoppedNodes.has(client.node))) {
        ctx.status = 404;
        ctx.body = CLIENT_NOT_FOUND;
        return;
      }
      const bound = client.user;
      const user = bound && (readModels.users.byUserId(bound.userId) ?? (await userFromStore(store, bound.oId)));
      if (!user) return { code: 0 as const, msg: 'success', data: { authenticated: false as const, clientId } };
      return { code: 0 as const, msg: 'success', data: { authenticated: true as const, clientId, user: toLookupUser(user) } };
    },
  }),
];
