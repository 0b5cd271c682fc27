// Presence (docs/api.md, "Presence"): who is online now across every node, and whether one user
// is. A realtime client belongs to no app (any app's page may open one, and any app's key may ask
// `/adm/user/get` about it), so every key with `presence:read` sees the same users.
import { PresenceAnswer, PresencePage } from '../../contract/answers.js';
import { AuditQuery, OIdParam } from '../../contract/requests.js';
import { toSpecTimestamp } from '../../domain/time.js';
import { pageOf } from '../../projections/audit.js';
import type { OnlineUser } from '../../projections/presence.js';
import type { UsersReadModel } from '../../projections/users.js';
import { route } from '../route.js';

const ACROSS_NODES =
  "A user is online while at least one of their signed-in realtime clients is held by a live node: a node that stops beating (killed, frozen, cut off) takes its clients out of presence once its lease lapses (7.5 `NODE_HEARTBEAT_MS`). `since` is the earliest of those clients' sign-ins, as the log recorded it. Every key with the permission sees every user: realtime clients belong to no app.";

const access = { kind: 'apiKey', permission: 'presence:read' } as const;

function entryOf(online: OnlineUser, users: UsersReadModel) {
  const user = users.byUserId(online.userId);
  return {
    position: online.position,
    userId: online.userId,
    oId: online.oId,
    name: user?.name ?? '',
    nickname: user?.nickname ?? '',
    avatar: user?.avatar ?? '',
    clients: online.clients,
    since: toSpecTimestamp(online.since),
  };
}

export const presenceRoutes = [
  route({
    method: 'get',
    path: '/adm/presence',
    tag: 'presence',
    summary: 'Who is online now, on every node',
    description: `${ACROSS_NODES} Ordered by \`position\` (the user online longest first); \`limit\`, \`after\` and \`before\` page it. A user whose earliest client closes between two pages moves later in the order.`,
    access,
    query: AuditQuery,
    ok: { description: 'One page of the users online', json: PresencePage },
    handle(_ctx, { query }, { presence, readModels, clockReading }) {
      const page = pageOf(presence.online(clockReading().liveNodes), query);
      return { code: 0 as const, msg: 'success', data: { ...page, items: page.items.map((online) => entryOf(online, readModels.users)) } };
    },
  }),

  route({
    method: 'get',
    path: '/adm/presence/:oId',
    tag: 'presence',
    summary: 'Whether one user is online now',
    description: `${ACROSS_NODES} From the service's own records: an oId it never saw sign in is offline (no platform call).`,
    access,
    params: OIdParam,
    ok: { description: 'Online (with how many clients, since when) or not', json: PresenceAnswer },
    handle(_ctx, { params: { oId } }, { presence, readModels, clockReading }) {
      const user = readModels.users.byOid(oId);
      const online = user && presence.ofUser(user.id, clockReading().liveNodes);
      const known = user ? { userId: user.id } : {};
      const data = online ? { oId, online: true, clients: online.clients, since: toSpecTimestamp(online.since), ...known } : { oId, online: false, clients: 0, ...known };
      return { code: 0 as const, msg: 'success', data };
    },
  }),
];
