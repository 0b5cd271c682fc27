// Realtime client lifecycle (docs/api.md, "Realtime and sign-in"): a connection opens, its user may sign in, it
// closes. Recorded in `client-<clientId>` so that every node knows which clients exist and who
// is behind them, whichever node holds the connection.
import type { Decider } from './decider.js';
import { ConflictError } from './errors.js';
import type { ClientDisconnected, ClientEvent, ClientOpener } from './events.js';

/** A live session and its user. */
export interface SessionBinding {
  sessionId: string;
  userId: string;
  oId: string;
}

/** Who is behind a client. */
export interface ClientBinding {
  /** The session that bound the user (absent only in events from before sessions were recorded). */
  sessionId?: string;
  userId: string;
  oId: string;
}

export type ClientState =
  | { status: 'unknown' }
  | ({ status: 'connected'; clientId: string; user: ClientBinding | undefined } & ClientOpener)
  | { status: 'disconnected'; clientId: string };

export type ConnectClient = { type: 'ConnectClient'; clientId: string; node: string; session: SessionBinding | undefined; at: string } & ClientOpener;
/** `rebind`: the sign-in comes from the browser holding the connection, which may sign in again. */
export type SignInClient = { type: 'SignInClient'; clientId: string; user: ClientBinding; rebind: boolean; at: string };

/** A connection bound to a user is signed in again only by the browser that holds it. */
export class ClientBoundError extends ConflictError {
  constructor(clientId: string) {
    super(`Client ${clientId} is signed in already; only the browser holding the connection may sign it in again`);
  }
}
export type DisconnectClient = { type: 'DisconnectClient'; clientId: string; reason: ClientDisconnected['data']['reason']; at: string };
export type ClientCommand = ConnectClient | SignInClient | DisconnectClient;

export const clientDecider: Decider<ClientState, ClientCommand, ClientEvent> = {
  initialState: () => ({ status: 'unknown' }),

  decide(command, state) {
    switch (command.type) {
      case 'ConnectClient': {
        if (state.status !== 'unknown') throw new ConflictError(`Client ${command.clientId} already exists`);
        const { clientId, node, session, at } = command;
        return [{ type: 'ClientConnected', data: { clientId, node, ...(session && { session }), at, ...openerOf(command) } }];
      }
      case 'SignInClient': {
        // A connection that closed in the meantime has nobody to tell: the session still counts.
        if (state.status !== 'connected') return [];
        if (state.user && !command.rebind) throw new ClientBoundError(command.clientId);
        const { clientId, user, at } = command;
        return [{ type: 'ClientSignedIn', data: { clientId, ...user, at } }];
      }
      case 'DisconnectClient': {
        if (state.status !== 'connected') return [];
        return [{ type: 'ClientDisconnected', data: { clientId: command.clientId, reason: command.reason, at: command.at } }];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ClientConnected':
        return { status: 'connected', clientId: event.data.clientId, user: event.data.session, ...openerOf(event.data) };
      case 'ClientSignedIn': {
        if (state.status !== 'connected') return state;
        const { sessionId, userId, oId } = event.data;
        return { ...state, user: { sessionId, userId, oId } };
      }
      case 'ClientDisconnected':
        return { status: 'disconnected', clientId: event.data.clientId };
    }
  },
};

/** The opener fields that are present (events from before they were recorded have none). */
export function openerOf({ origin, browser }: ClientOpener): ClientOpener {
  return { ...(origin !== undefined && { origin }), ...(browser !== undefined && { browser }) };
}
