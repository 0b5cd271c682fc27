// One realtime client (spec §3.1, design.md §4): `anonymous` —SIGNED_IN→ `signedIn` —CLOSE→
// `closed`, or `anonymous` —CLOSE→ `closed`; a connection opened with a live session starts in
// `signedIn`. Every frame the connection sends is emitted by a transition of this actor, except a
// live message: one push is one event for the user, whose actor (userActor.ts) emits one frame for
// all of the user's connections on this node. The hub hands the emitted frames to the
// connections' writers, and nothing else writes to the socket.
//
// Frame ids are global log positions, so a browser's Last-Event-ID always names a position.
// `lastId` is the highest id this actor sent (PB_CONNECT, login, replayed messages); a message at
// or below it was already sent (or replayed) and is dropped, which is what keeps a reconnect free
// of duplicates. A live message is dropped the same way: the hub writes it to this connection only
// above this actor's `lastId`.
//
// Actor logic written out (XState `ActorLogic`) rather than a state machine: one is created for
// every connection, and a machine's actor allocated five times as much over its life (creation,
// the initial microstep, a snapshot per step with its sets of state nodes), most of a connect's
// garbage. Its snapshots keep a machine's shape (`value`, `context`, `status` done once closed),
// and each frame is handed to the actor scope as an `xstate.emit` action, as a machine's `emit`
// is: the actor emits it once its snapshot is updated, and xstate's pure `initialTransition` and
// `transition` return it among the actions, so the logic is tested without an actor.
import type * as v from 'valibot';
import type { ActorLogic, ActorScope, ActorSystem, AnyActorRef, EventObject, Snapshot } from 'xstate';
import type { LoginFrame, MessageFrame, PbConnectFrame } from '../contract/answers.js';
import { isUnseen, messageFrame, recordMessage, type MessageEvent } from './messages.js';
import type { SpecUser } from './specUser.js';

export type Frame =
  | { type: 'PB_CONNECT'; id: number; data: v.InferOutput<typeof PbConnectFrame> }
  | { type: 'login'; id: number; data: v.InferOutput<typeof LoginFrame> }
  | { type: 'message'; id: number; data: v.InferOutput<typeof MessageFrame> }
  | { type: 'heartbeat' };

export type ClientEvent =
  | { type: 'SIGNED_IN'; user: SpecUser; sessionId: string | undefined; position: number }
  | MessageEvent
  | { type: 'HEARTBEAT' }
  | { type: 'CLOSE' };

export interface ClientInput {
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

export type ClientSnapshot = Snapshot<undefined> & { value: 'anonymous' | 'signedIn' | 'closed'; context: ClientContext };

type Scope = ActorScope<ClientSnapshot, ClientEvent, ActorSystem<any>, Frame>;

const HEARTBEAT_FRAME: Frame = { type: 'heartbeat' };

const snapshotIn = (value: 'anonymous' | 'signedIn', context: ClientContext): ClientSnapshot => ({ status: 'active', output: undefined, error: undefined, value, context });

/** Sends `frame` the way a machine's `emit` action does: executed by the actor after the step. */
function emitFrame(scope: Scope, frame: Frame, context: ClientContext, event: EventObject): void {
  scope.actionExecutor({
    type: 'xstate.emit',
    // A machine's action arguments (its own actor as `self`); nothing here reads them.
    info: { context, event, self: scope.self as AnyActorRef, system: scope.system },
    params: { event: frame },
    exec: () => scope.defer(() => scope.emit(frame)),
  });
}

const connectFrame = ({ clientId, user, lastId }: ClientContext): Frame => ({
  type: 'PB_CONNECT',
  id: lastId,
  data: user ? { client_id: clientId, login_status: true, user } : { client_id: clientId, login_status: false },
});

export const clientActorLogic: ActorLogic<ClientSnapshot, ClientEvent, ClientInput, ActorSystem<any>, Frame> = {
  getInitialSnapshot(scope, input) {
    const context: ClientContext = { clientId: input.clientId, user: input.session?.user, sessionId: input.session?.sessionId, lastId: input.position };
    emitFrame(scope, connectFrame(context), context, { type: 'xstate.init' });
    return snapshotIn(input.session ? 'signedIn' : 'anonymous', context);
  },

  transition(snapshot, event, scope) {
    if (snapshot.value === 'closed') return snapshot;
    const { context } = snapshot;
    switch (event.type) {
      case 'SIGNED_IN': {
        // Also while signed in (another account on the same connection): the last sign-in wins.
        // The login frame never moves the id backwards (a callback served by a node that is behind).
        const next = { ...context, user: event.user, sessionId: event.sessionId, lastId: Math.max(context.lastId, event.position) };
        emitFrame(scope, { type: 'login', id: next.lastId, data: { action: 'login', user: event.user } }, next, event);
        return snapshotIn('signedIn', next);
      }
      case 'MESSAGE': {
        // An anonymous client has no messages; a signed-in one gets each above its last id once.
        if (snapshot.value !== 'signedIn' || !isUnseen({ context, event })) return snapshot;
        const next = { ...context, ...recordMessage({ event }) };
        emitFrame(scope, messageFrame({ event }), next, event);
        return snapshotIn('signedIn', next);
      }
      case 'HEARTBEAT':
        emitFrame(scope, HEARTBEAT_FRAME, context, event);
        return snapshot;
      case 'CLOSE':
        return { status: 'done', output: undefined, error: undefined, value: 'closed', context };
    }
  },

  getPersistedSnapshot: (snapshot) => snapshot,
};

export type ClientActorLogic = typeof clientActorLogic;

/**
 * The parent of a node's client and user actors: each joins this one actor system rather than
 * bringing a system of its own. It keeps no state and ignores what its children tell it (a child
 * reaching its final state sends it an event): a machine as the parent kept an entry for the name
 * of every such event it had seen, one per child that ever left. Children are created with it as
 * their parent, not spawned by it, so it holds no list of them either.
 */
export const realtimeActorsLogic: ActorLogic<Snapshot<undefined>, EventObject, undefined, ActorSystem<any>> = {
  getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }),
  transition: (snapshot) => snapshot,
  getPersistedSnapshot: (snapshot) => snapshot,
};
