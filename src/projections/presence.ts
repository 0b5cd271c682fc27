// Who is online now, across nodes (docs/api.md, "GET /adm/presence"): the users with at least one
// signed-in realtime client held by a live node. The clients come from the log (every node folds
// the same ones); which nodes are live comes from the store's heartbeats (src/services/logClock.ts),
// so a killed node's clients leave presence once its lease lapses, before anything records their
// end. Times are the ones the log recorded for the sign-ins: no node's clock is read here.
import type { ClientsReadModel, ConnectedClient } from './clients.js';

/** One user online: their signed-in clients on live nodes, and the earliest of those sign-ins. */
export interface OnlineUser {
  userId: string;
  oId: string;
  /** Log position of the earliest sign-in among those clients: the order, and the paging cursor. */
  position: number;
  clients: number;
  /** The earliest time the log recorded for one of those sign-ins (ISO-8601 UTC). */
  since: string;
}

/** Signed-in clients held by one node, and the users they belong to. */
export interface NodePresence {
  clients: number;
  users: number;
}

export class PresenceQueries {
  /** The list last built, and what it was built from (the events the clients model had applied, the live nodes). */
  private cached: { applied: number; live: string; users: OnlineUser[] } | undefined;

  constructor(private readonly clients: ClientsReadModel) {}

  /**
   * Every user online, in the order of their earliest live sign-in. Built in one pass over the
   * signed-in clients, which the model keeps in sign-in order, and kept until a client event or the
   * live nodes change it (pages of one listing read the same list).
   */
  online(liveNodes: ReadonlySet<string>): OnlineUser[] {
    const { clients } = this;
    const live = [...liveNodes].sort().join('\n');
    if (this.cached?.applied === clients.applied && this.cached.live === live) return this.cached.users;
    const byUser = new Map<string, OnlineUser>();
    for (const client of clients.signedIn()) {
      if (!isLive(client, liveNodes)) continue;
      const userId = client.user!.userId;
      byUser.set(userId, counted(byUser.get(userId), client));
    }
    const users = [...byUser.values()];
    this.cached = { applied: clients.applied, live, users };
    return users;
  }

  /** One user's presence: undefined when none of their clients is held by a live node. */
  ofUser(userId: string, liveNodes: ReadonlySet<string>): OnlineUser | undefined {
    let found: OnlineUser | undefined;
    for (const client of this.clients.ofUser(userId)) if (isLive(client, liveNodes)) found = counted(found, client);
    return found;
  }

  /** Signed-in clients and online users per live node (a user on two nodes counts on each). */
  byNode(liveNodes: ReadonlySet<string>): Map<string, NodePresence> {
    const nodes = new Map<string, { clients: number; users: Set<string> }>([...liveNodes].map((node) => [node, { clients: 0, users: new Set<string>() }]));
    for (const client of this.clients.signedIn()) {
      const node = client.node === undefined ? undefined : nodes.get(client.node);
      if (!node) continue;
      node.clients++;
      node.users.add(client.user!.userId);
    }
    return new Map([...nodes].map(([name, { clients, users }]) => [name, { clients, users: users.size }]));
  }
}

/** `user` with one more live client: the earliest position and time among them. */
function counted(user: OnlineUser | undefined, client: ConnectedClient): OnlineUser {
  const { position, at } = client.signedIn!;
  if (!user) return { userId: client.user!.userId, oId: client.user!.oId, position, clients: 1, since: at };
  user.clients++;
  user.position = Math.min(user.position, position);
  if (at < user.since) user.since = at;
  return user;
}

/** A client counts while a live node holds it; one from before nodes were recorded never does. */
const isLive = (client: ConnectedClient, liveNodes: ReadonlySet<string>) => client.node !== undefined && liveNodes.has(client.node);
