// The Online page: the users online now, as /adm/presence judges it (signed-in clients held by
// live nodes, src/projections/presence.ts), with their names and the nodes holding them.
import type { OnlineList } from '../../contract/console.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from './consoleRoute.js';

/** Users listed at most; the total counts them all. */
const SHOWN = 500;

function online({ presence, clockReading, readModels, index }: ConsoleDeps): OnlineList {
  const { liveNodes } = clockReading();
  const all = presence.online(liveNodes);
  return {
    total: all.length,
    users: all.slice(0, SHOWN).map(({ userId, oId, clients, since }) => ({
      oId,
      name: index.user(oId)?.name ?? '',
      clients,
      since,
      nodes: [...new Set([...readModels.clients.ofUser(userId)].flatMap(({ node }) => (node !== undefined && liveNodes.has(node) ? [node] : [])))].sort(),
    })),
  };
}

export const onlineEndpoints = [consoleRoute({ method: 'get', path: '/console/api/online', handle: (_ctx, _input, deps) => online(deps) })];
