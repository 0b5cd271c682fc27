import type { ClientBinding } from '../domain/client.js';
import { clientDecider, openerOf } from '../domain/client.js';
import { fold } from '../domain/decider.js';
import { streams, type ClientEvent, type ClientOpener } from '../domain/events.js';
import type { ClientsReadModel } from '../projections/clients.js';
import type { EventStore } from '../store/port.js';

const CLIENT_ID = /^[A-Za-z0-9_-]{16,128}$/;

/** A client id as this service issues them (url-safe); anything else cannot name a client. */
export const isClientIdShape = (clientId: string) => CLIENT_ID.test(clientId);

/**
 * Connected clients on any node. The read model answers almost always; a client that connected
 * a moment ago on another node may not have reached it yet, so the store is asked then.
 */
export class Clients {
  constructor(private readonly deps: { store: EventStore; clients: ClientsReadModel }) {}

  /** The client, with the node holding it when the read models know it (a client another node just connected: not yet). */
  async find(clientId: string): Promise<{ clientId: string; user: ClientBinding | undefined; node?: string | undefined } | undefined> {
    if (!isClientIdShape(clientId)) return undefined;
    const known = this.deps.clients.get(clientId);
    if (known) return known;
    const state = fold(clientDecider, (await this.deps.store.readStream(streams.client(clientId))) as unknown as ClientEvent[]);
    return state.status === 'connected' ? { clientId, user: state.user } : undefined;
  }

  /**
   * Who opened the connection, and whether a user is bound to it, when it is connected. From the
   * store only: exact even for a client another node just connected or closed.
   */
  async opener(clientId: string): Promise<(ClientOpener & { bound: boolean }) | undefined> {
    if (!isClientIdShape(clientId)) return undefined;
    const state = fold(clientDecider, (await this.deps.store.readStream(streams.client(clientId))) as unknown as ClientEvent[]);
    return state.status === 'connected' ? { ...openerOf(state), bound: state.user !== undefined } : undefined;
  }
}
