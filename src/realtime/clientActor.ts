// One realtime client (spec §3.1, design.md §4): `anonymous` —SIGNED_IN→ `signedIn` —CLOSE→
// `closed`, or `anonymous` —CLOSE→ `closed`; a connection opened with a live session starts in
// `signedIn`. Every frame the connection sends is emitted by a transition of this machine
// (declared in `types.emitted`), except a live message: one push is one event for the user, whose
// actor (userActor.ts) emits one frame for all of the user's connections on this node. The hub
// hands the emitted frames to the connections' writers, and nothing else writes to the socket.
//
// Frame ids are global log positions, so a browser's Last-Event-ID always names a position.
// `lastId` is the highest id this machine sent (PB_CONNECT, login, replayed messages); a message
// at or below it was already sent (or replayed) and is dropped, which is what keeps a reconnect
// free of duplicates. A live message is dropped the same way: the hub writes it to this
// connection only above this machine's `lastId`.
import type * as v from 'valibot';
import { assign, emit, setup } from 'xstate';
import type { LoginFrame, MessageFrame, PbConnectFrame } from '../contract/answers.js';
import { isUnseen, messageFrame, recordMessage, type MessageEvent } from './messages.js';
import type { SpecUser } from './specUser.js';

export type Frame =
  | { type: 'PB_CONNECT'; id: number; data: v.InferOutput<typeof PbConnectFrame> }
  | { type: 'login'; id: number; data: v.InferOutput<typeof LoginFrame> }
  | { type: 'message'; id: number; data: v.InferOutput<typeof MessageFrame> }
  | { type: 'heartbeat' };

export type ClientMachineEvent =
  | { type: 'SIGNED_IN'; user: SpecUser; sessionId: string | undefined; position: number }
  | MessageEvent
  | { type: 'HEARTBEAT' }
  | { type: 'CLOSE' };

export interface ClientMachineInput {
  clientId: string;
  /** Id of the PB_CONNECT frame. */
  position: number;
  /** Present when the request carried a live session: the client starts signed in. */
  session?: { user: SpecUser; sessionId: string };
}

export interface ClientContext {
  clientId: string;
  user: SpecUser | undefined;
  sessionId: string | undefined;
  lastId: number;
}

const client = setup({
  types: {
    context: {} as ClientContext,
    input: {} as ClientMachineInput,
    events: {} as ClientMachineEvent,
    emitted: {} as Frame,
  },
  guards: { isUnseen },
  actions: {
    emitConnect: emit(({ context }): Frame => ({
      type: 'PB_CONNECT',
      id: context.lastId,
      data: context.user
        ? { client_id: context.clientId, login_status: true, user: context.user }
        : { client_id: context.clientId, login_status: false },
    })),
    bindUser: assign(({ context, event }) => {
      if (event.type !== 'SIGNED_IN') return {};
      // The login frame never moves the id backwards (a callback served by a node that is behind).
      return { user: event.user, sessionId: event.sessionId, lastId: Math.max(context.lastId, event.position) };
    }),
    emitLogin: emit(({ context }): Frame => ({ type: 'login', id: context.lastId, data: { action: 'login', user: context.user! } })),
    emitMessage: emit(messageFrame),
    recordMessage: assign(recordMessage),
    emitHeartbeat: emit({ type: 'heartbeat' } as Frame),
  },
});

/**
 * The machine as it starts in `initial`, PB_CONNECT sent by the root's entry. One machine per
 * first state rather than a transient state choosing it from the input: that extra eventless step
 * was a large part of each connection's actor creation, in time and in garbage.
 */
const startingIn = (initial: 'anonymous' | 'signedIn') =>
  client.createMachine({
    id: 'realtimeClient',
    context: ({ input }) => ({
      clientId: input.clientId,
      user: input.session?.user,
      sessionId: input.session?.sessionId,
      lastId: input.position,
    }),
    entry: 'emitConnect',
    initial,
    states: {
      anonymous: {
        on: {
          SIGNED_IN: { target: 'signedIn', actions: ['bindUser', 'emitLogin'] },
          HEARTBEAT: { actions: 'emitHeartbeat' },
          CLOSE: 'closed',
        },
      },
      signedIn: {
        on: {
          // Signing in again on the same connection (another account): the last sign-in wins.
          SIGNED_IN: { actions: ['bindUser', 'emitLogin'] },
          MESSAGE: { guard: 'isUnseen', actions: ['recordMessage', 'emitMessage'] },
          HEARTBEAT: { actions: 'emitHeartbeat' },
          CLOSE: 'closed',
        },
      },
      closed: { type: 'final' },
    },
  });

export const clientMachine = startingIn('anonymous');
const signedInClientMachine = startingIn('signedIn');

/** The machine a connection starts: signed in when the request carried a live session. */
export const clientMachineFor = (input: ClientMachineInput) => (input.session ? signedInClientMachine : clientMachine);

export type ClientMachine = typeof clientMachine;

/**
 * The parent of a node's client actors: each client joins this one actor system rather than
 * bringing a system of its own. It keeps no state; a client reaching `closed` only tells it so.
 * Clients are created with it as their parent, not spawned by its transitions, because a spawn
 * copies the parent's whole list of children.
 */
export const clientsMachine = setup({}).createMachine({ id: 'realtimeClients' });

/**
 * The ids its children are created with: one per kind, not one per actor. A child reaching its
 * final state tells the parent with an event named after its id, and the parent's machine keeps
 * an entry for every event name it has seen: with the default (an id per actor), one more for
 * every client that ever left, for as long as the node runs.
 */
export const CHILD_IDS = { client: 'realtimeClient', user: 'realtimeUser' } as const;
