import type { ClientBinding } from '../domain/client.js';
import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';
import { refill } from './snapshotState.js';

export interface ConnectedClient {
  clientId: string;
  /** The node holding the connection (undefined for events from before nodes were recorded). */
  node: string | undefined;
  /** The user bound by a session cookie at connect time or by a later sign-in. */
  user: ClientBinding | undefined;
}

/**
 * Realtime clients that are connected right now, on any node, and who is behind each
 * (`/adm/user/get`, the login page). Disconnected clients are dropped: the spec answers the
 * same for "unknown" and "disconnected".
 */
export class ClientsReadModel implements Projection {
  readonly name = 'clients';
  readonly version = 1;
  readonly handles = ['ClientConnected', 'ClientSignedIn', 'ClientDisconnected'] as const;
  private readonly connected = new Map<string, ConnectedClient>();
  /** Open connections per signed-in user (presence). */
  private readonly connectionsByUser = new Map<string, number>();

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    switch (event.type) {
      case 'ClientConnected':
        this.connected.set(event.data.clientId, { clientId: event.data.clientId, node: event.data.node, user: event.data.session });
        this.count(event.data.session?.userId, +1);
        break;
      case 'ClientSignedIn': {
        const client = this.connected.get(event.data.clientId);
        if (!client) break;
        this.count(client.user?.userId, -1);
        client.user = { ...(event.data.sessionId !== undefined && { sessionId: event.data.sessionId }), userId: event.data.userId, oId: event.data.oId };
        this.count(client.user.userId, +1);
        break;
      }
      case 'ClientDisconnected':
        this.count(this.connected.get(event.data.clientId)?.user?.userId, -1);
        this.connected.delete(event.data.clientId);
        break;
    }
  }

  snapshotState(): { connected: Map<string, ConnectedClient>; connectionsByUser: Map<string, number> } {
    return { connected: this.connected, connectionsByUser: this.connectionsByUser };
  }

  restoreState(state: ReturnType<ClientsReadModel['snapshotState']>): boolean {
    refill(this.connected, state.connected);
    refill(this.connectionsByUser, state.connectionsByUser);
    return true;
  }

  /** Whether the user has at least one open connection, on any node. */
  isOnline(userId: string): boolean {
    return this.connectionsByUser.has(userId);
  }

  private count(userId: string | undefined, change: 1 | -1): void {
    if (userId === undefined) return;
    const count = (this.connectionsByUser.get(userId) ?? 0) + change;
    if (count > 0) this.connectionsByUser.set(userId, count);
    else this.connectionsByUser.delete(userId);
  }

  get(clientId: string): ConnectedClient | undefined {
    return this.connected.get(clientId);
  }

  all(): IterableIterator<ConnectedClient> {
    return this.connected.values();
  }

  get size(): number {
    return this.connected.size;
  }
}
