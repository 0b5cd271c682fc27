// One realtime client (docs/architecture.md, "Realtime"): a state machine, `anonymous` —SIGNED_IN→
// `signedIn` —CLOSE→ `closed`, or `anonymous` —CLOSE→ `closed`; a connection opened with a live
// session starts in `signedIn`. Every frame the connection sends is emitted by a transition of this
// machine, except a live message: one push is one event for the user, whose actor (userActor.ts)
// emits one frame for all of the user's connections on this node. The transitions' actions hand
// their frames to the client's `out` (its input), which passes them through the hub's RxJS subject
// to the connection's writer, and reaching `closed` ends them; nothing else writes to the socket.
// An action rather than XState's `emit`: an emitted event reaches only listeners registered on
// each actor, and those (a map, a set and a bound handler per actor) would live as long as the
// stream, thousands of them.
//
// The hub runs these machines in place (`ClientMachines`) rather than as one started actor per
// connection: a connection keeps its machine's snapshot, and each event goes through the machine's
// own transition (XState's `ActorLogic` contract, the one an actor calls), its actions executed as
// the transition takes them, in order, as a running actor executes them. An actor per connection
// kept a mailbox, a scope of closures, observer tables and resolved options for the stream's life,
// several times the snapshot itself, and cost more CPU to start than the rest of a connect.
//
// Frame ids are global log positions, so a browser's Last-Event-ID always names a position.
// `lastId` is the highest id this machine sent (PB_CONNECT, login, replayed messages); a message
// at or below it was already sent (or replayed) and is dropped, which is what keeps a reconnect
// free of duplicates. A live message is dropped the same way: the hub writes it to this
// connection only above this machine's `lastId`.
import type * as v from 'valibot';
import { assertEvent, assign, createActor, fromTransition, setup, type ActorScope, type ErrorActorEvent, type EventObject, type SnapshotFrom } from 'xstate';
import type { LoginFrame, MessageFrame, PbConnectFrame } from '../contract/answers.js';
import { isUnseen, messageFrame, type PushedMessage } from './messages.js';
import type { SpecUser } from './specUser.js';

export type Frame =
  | { type: 'PB_CONNECT'; id: number; data: v.InferOutput<typeof PbConnectFrame> }
  | { type: 'login'; id: number; data: v.InferOutput<typeof LoginFrame> }
  | { type: 'message'; id: number; data: v.InferOutput<typeof MessageFrame> }
  | { type: 'heartbeat' };

export type ClientActorEvent = { type: 'SIGNED_IN'; user: SpecUser; sessionId: string | undefined; position: number } | PushedMessage | { type: 'HEARTBEAT' } | { type: 'CLOSE' };

/** Where a client's frames go: through the hub's subject to the connection's writer. */
export interface FrameSink {
  send(frame: Frame): void;
  /** The client reached `closed`: no frame follows. */
  end(): void;
}

export interface ClientInput {
  clientId: string;
  out: FrameSink;
  /** Id of the PB_CONNECT frame. */
  position: number;
  /** Present when the request carried a live session: the client starts signed in. */
  session?: { user: SpecUser; sessionId: string };
}

export interface ClientContext {
  clientId: string;
  out: FrameSink;
  user: SpecUser | undefined;
  sessionId: string | undefined;
  lastId: number;
}

/** One object for every heartbeat: the frame carries nothing of its connection. */
const HEARTBEAT_FRAME: Frame = { type: 'heartbeat' };

const client = setup({
  types: {
    context: {} as ClientContext,
    input: {} as ClientInput,
    events: {} as ClientActorEvent,
  },
  guards: {
    // Only a client started with a session holds a user while anonymous (a sign-in leaves).
    hasSession: ({ context }) => context.user !== undefined,
    isUnseen: ({ context, event }) => {
      assertEvent(event, 'MESSAGE');
      return isUnseen(context, event);
    },
  },
  actions: {
    emitConnect: ({ context: { clientId, user, lastId, out } }) =>
      out.send({
        type: 'PB_CONNECT',
        id: lastId,
        data: user ? { client_id: clientId, login_status: true, user } : { client_id: clientId, login_status: false },
      }),
    bindUser: assign(({ context, event }) => {
      assertEvent(event, 'SIGNED_IN');
      // The login frame never moves the id backwards (a callback served by a node that is behind).
      return { user: event.user, sessionId: event.sessionId, lastId: Math.max(context.lastId, event.position) };
    }),
    // After bindUser: its id is the context's new `lastId`.
    emitLogin: ({ context, event }) => {
      assertEvent(event, 'SIGNED_IN');
      context.out.send({ type: 'login', id: context.lastId, data: { action: 'login', user: event.user } });
    },
    recordMessage: assign(({ event }) => {
      assertEvent(event, 'MESSAGE');
      return { lastId: event.position };
    }),
    emitMessage: ({ context, event }) => {
      assertEvent(event, 'MESSAGE');
      context.out.send(messageFrame(event));
    },
    emitHeartbeat: ({ context }) => context.out.send(HEARTBEAT_FRAME),
    endFrames: ({ context }) => context.out.end(),
  },
});

/**
 * The client's machine. PB_CONNECT is the root's entry, so it is sent once whichever state the
 * client starts in; a machine has one initial state, so a client with a session leaves
 * `anonymous` by the eventless transition of its first step, before any event reaches it.
 */
export const clientActorLogic = client.createMachine({
  id: 'realtimeClient',
  context: ({ input }) => ({ clientId: input.clientId, out: input.out, user: input.session?.user, sessionId: input.session?.sessionId, lastId: input.position }),
  entry: 'emitConnect',
  initial: 'anonymous',
  states: {
    anonymous: {
      always: { guard: 'hasSession', target: 'signedIn' },
      on: {
        SIGNED_IN: { target: 'signedIn', actions: ['bindUser', 'emitLogin'] },
        // An anonymous client has no messages.
        HEARTBEAT: { actions: 'emitHeartbeat' },
        CLOSE: 'closed',
      },
    },
    signedIn: {
      on: {
        // Also while signed in (another account on the same connection): the last sign-in wins.
        SIGNED_IN: { actions: ['bindUser', 'emitLogin'] },
        // Each message above the last id sent, once.
        MESSAGE: { guard: 'isUnseen', actions: ['recordMessage', 'emitMessage'] },
        HEARTBEAT: { actions: 'emitHeartbeat' },
        CLOSE: 'closed',
      },
    },
    closed: { type: 'final', entry: 'endFrames' },
  },
});

export type ClientActorLogic = typeof clientActorLogic;
export type ClientSnapshot = SnapshotFrom<ClientActorLogic>;

/** Takes frames and drops them: the input of the host's idle actor, which never runs. */
const DISCARD: FrameSink = { send: () => undefined, end: () => undefined };

/**
 * Runs the client machines of one hub in place, with one scope for all of them: `start` takes a
 * client's first step (PB_CONNECT, and the eventless sign-in of a client with a session), `step`
 * one event; both execute the step's actions before they return the snapshot it reached. An
 * action that throws throws out of the call, and the snapshot the client had stays its own.
 */
export class ClientMachines {
  private readonly scope: ActorScope<ClientSnapshot, ClientActorEvent>;

  constructor() {
    // The `self` and system every step names: an actor of the machine that is never started. The
    // machine has no delayed transition, no child and no action but its own functions and
    // assigns (its unit test checks), so nothing else of the scope is ever called on.
    const self = createActor(clientActorLogic, { input: { clientId: '', position: 0, out: DISCARD } });
    this.scope = {
      self,
      id: self.id,
      sessionId: self.sessionId,
      system: self.system,
      logger: () => undefined,
      defer: (effect) => effect(),
      emit: () => undefined,
      stopChild: () => undefined,
      actionExecutor: (action) => action.exec?.(action.info, action.params),
    };
  }

  start(input: ClientInput): ClientSnapshot {
    return clientActorLogic.getInitialSnapshot(this.scope, input);
  }

  /** The final state takes no event: a closed client stays closed and sends nothing. */
  step(snapshot: ClientSnapshot, event: ClientActorEvent): ClientSnapshot {
    return snapshot.status === 'active' ? clientActorLogic.transition(snapshot, event, this.scope) : snapshot;
  }
}

/**
 * The parent of a node's user actors (userActor.ts): each joins this one actor system rather than
 * bringing a system of its own. It keeps no state. Of what its children tell it (a child reaching
 * its final state sends it an event), it passes on only a child's failure, a transition that threw:
 * with no observer of its own, that child's error reaches nobody else. A machine as the parent
 * kept an entry for the name of every event it had seen, one per child that ever left. Children
 * are created with it as their parent, not spawned by it, so it holds no list of them either.
 */
export function realtimeActorsLogic(onChildFailed: (actorId: string, error: unknown) => void = () => undefined) {
  return fromTransition((state: undefined, event: EventObject) => {
    if (event.type.startsWith('xstate.error.actor.')) onChildFailed((event as ErrorActorEvent).actorId, (event as ErrorActorEvent).error);
    return state;
  }, undefined);
}
