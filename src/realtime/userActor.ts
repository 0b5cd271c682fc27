// A signed-in user's live messages on this node (docs/architecture.md, "Realtime"): `open` —CLOSE→ `closed` once the
// user's last connection here closed. A push is one MESSAGE event for each user it names, however
// many connections the user holds, and its transition emits the one message frame the hub writes
// to each of them (to those whose client machine has not sent that id yet, see clientActor.ts).
// Messages leave in log order: one at or below `lastId` was emitted already and is dropped.
//
// Actor logic (XState's `ActorLogic`, emitting through the scope's `emit`) rather than a state
// machine: a broadcast runs this transition once for every user it reaches, and for two states
// and one guarded event a machine's step is mostly work around the decision itself. It is not
// `fromTransition` because that logic never reaches a final state, and an actor that is not done
// stays registered in the node's actor system. Its snapshots keep a machine's shape (`value`,
// `context`, `status` done once closed), and the actor is created, started, listened to and closed
// the same way.
import type { ActorLogic, ActorSystem, ActorSystemInfo, Snapshot } from 'xstate';
import { isUnseen, messageFrame, type PushedMessage } from './messages.js';
import type { LiveFrame } from './replay.js';

export type UserSnapshot = Snapshot<undefined> & { value: 'open' | 'closed'; context: { lastId: number } };

export type UserActorEvent = PushedMessage | { type: 'CLOSE' };

export const userActorLogic: ActorLogic<UserSnapshot, UserActorEvent, undefined, ActorSystem<ActorSystemInfo>, LiveFrame> = {
  getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined, value: 'open', context: { lastId: 0 } }),
  transition(snapshot, event, scope) {
    if (snapshot.value === 'closed') return snapshot;
    if (event.type === 'CLOSE') return { status: 'done', output: undefined, error: undefined, value: 'closed', context: snapshot.context };
    if (!isUnseen(snapshot.context, event)) return snapshot;
    scope.emit(messageFrame(event));
    return { status: 'active', output: undefined, error: undefined, value: 'open', context: { lastId: event.position } };
  },
  getPersistedSnapshot: (snapshot) => snapshot,
};

export type UserActorLogic = typeof userActorLogic;
