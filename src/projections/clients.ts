import type { ClientBinding } from '../domain/client.js';
import { streams } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';
import { refill } from './snapshotState.js';

const CLIENT_STREAM = streams.client('');

export interface ConnectedClient {
  clientId: string;
  /** The node holding the connection (undefined for events from before nodes were recorded). */
  node: string | undefined;
  /** The user bound by a session cookie at connect time or by a later sign-in. */
  user: ClientBinding | undefined;
  /**
   * The event that bound `user` (its ClientSignedIn, or its ClientConnected with a session): its
   * log position and the time the log recorded it (`created`, the log's clock, never a node's).
   */
  signedIn: { position: number; at: string } | undefined;
}

/**
 * Realtime clients that are connected right now, on any node, and who is behind each
 * (`/adm/user/get`, the login page, presence). Disconnected clients are dropped: the spec
 * answers the same for "unknown" and "disconnected".
 */
export class ClientsReadModel implements Projection {
  readonly name = 'clients';
  readonly version = 3;
  readonly handles = ['ClientConnected', 'ClientSignedIn', 'ClientDisconnected', 'StreamsDeleted'] as const;
  private readonly connected = new Map<string, ConnectedClient>();
  /** Signed-in clients per user (presence). */
  private readonly clientsByUser = new Map<string, Set<ConnectedClient>>();
  /** Signed-in clients in the order of their sign-in's log position (a Map keeps insertion order). */
  private readonly bySignIn = new Map<string, ConnectedClient>();
  /** Counts the events applied: what is derived from this model is current while it stays put. */
  applied = 0;

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    this.applied++;
    const at = { position: recorded.position, at: recorded.created };
    switch (event.type) {
      case 'ClientConnected': {
        const client: ConnectedClient = { clientId: event.data.clientId, node: event.data.node, user: event.data.session, signedIn: event.data.session && at };
        this.connected.set(client.clientId, client);
        this.bind(client);
        break;
      }
      case 'ClientSignedIn': {
        const client = this.connected.get(event.data.clientId);
        if (!client) break;
        this.unbind(client);
        client.user = { ...(event.data.sessionId !== undefined && { sessionId: event.data.sessionId }), userId: event.data.userId, oId: event.data.oId };
        client.signedIn = at;
        this.bind(client);
        break;
      }
      case 'ClientDisconnected':
        this.drop(event.data.clientId);
        break;
      // Only ended clients are deleted: one still here had its end deleted with it (a start
      // from a snapshot taken before that end).
      case 'StreamsDeleted':
        for (const stream of event.data.streams) if (stream.startsWith(CLIENT_STREAM)) this.drop(stream.slice(CLIENT_STREAM.length));
        break;
    }
  }

  /** The clients alone: the indexes by user and by sign-in are built again from them. */
  snapshotState(): { connected: Map<string, ConnectedClient> } {
    return { connected: this.connected };
  }

  restoreState(state: ReturnType<ClientsReadModel['snapshotState']>): boolean {
    refill(this.connected, state.connected);
    this.clientsByUser.clear();
    this.bySignIn.clear();
    const signedIn = [...this.connected.values()].filter((client) => client.signedIn !== undefined);
    for (const client of signedIn.sort((a, b) => a.signedIn!.position - b.signedIn!.position)) this.bind(client);
    this.applied++;
    return true;
  }

  /**
   * Whether the user has at least one open connection, on any node; given the stopped nodes
   * (ClockReading), on any other node: a stopped node's clients are gone, though nothing recorded
   * their end.
   */
  isOnline(userId: string, stoppedNodes?: ReadonlySet<string>): boolean {
    const clients = this.clientsByUser.get(userId);
    if (!clients || stoppedNodes === undefined) return clients !== undefined;
    for (const client of clients) if (client.node === undefined || !stoppedNodes.has(client.node)) return true;
    return false;
  }

  /** The user's signed-in clients, on any node. */
  ofUser(userId: string): ReadonlySet<ConnectedClient> {
    return this.clientsByUser.get(userId) ?? NONE;
  }

  /** Every signed-in client, in the order of their sign-ins in the log. */
  signedIn(): IterableIterator<ConnectedClient> {
    return this.bySignIn.values();
  }

  private drop(clientId: string): void {
    const client = this.connected.get(clientId);
    if (client) this.unbind(client);
    this.connected.delete(clientId);
  }

  private bind(client: ConnectedClient): void {
    const userId = client.user?.userId;
    if (userId === undefined) return;
    const clients = this.clientsByUser.get(userId);
    if (clients) clients.add(client);
    else this.clientsByUser.set(userId, new Set([client]));
    this.bySignIn.set(client.clientId, client);
  }

  private unbind(client: ConnectedClient): void {
    const userId = client.user?.userId;
    if (userId === undefined) return;
    const clients = this.clientsByUser.get(userId);
    if (clients?.delete(client) && clients.size === 0) this.clientsByUser.delete(userId);
    this.bySignIn.delete(client.clientId);
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

const NONE: ReadonlySet<ConnectedClient> = new Set();
