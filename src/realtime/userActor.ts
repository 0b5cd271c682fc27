// A signed-in user's live messages on this node (design.md §4): `open` —CLOSE→ `closed` once the
// user's last connection here closed. A push is one MESSAGE event for each user it names, however
// many connections the user holds, and its transition emits the one message frame the hub writes
// to each of them (to those whose client actor has not sent that id yet, see clientActor.ts).
// Messages leave in log order: one at or below `lastId` was emitted already and is dropped.
//
// Actor logic written out rather than a state machine: a broadcast runs this transition once for
// every user it reaches, and for two states and one guarded event a machine's transition (the
// microstep, the eventless check, the snapshot clone, resolving the guard and actions) cost over
// ten times what the decision itself does. Its snapshots keep a machine's shape (`value`,
// `context`, `status` done once closed), and the actor is created, started, listened to and
// closed the same way.
import type { ActorLogic, ActorSystem, Snapshot } from 'xstate';
import type { Frame } from './clientActor.js';
import { isUnseen, messageFrame, recordMessage, type MessageEvent } from './messages.js';

export type UserSnapshot = Snapshot<undefined> & { value: 'open' | 'closed'; context: { lastId: number } };

export type UserEvent = MessageEvent | { type: 'CLOSE' };

export const userActorLogic: ActorLogic<UserSnapshot, UserEvent, undefined, ActorSystem<any>, Frame> = {
  getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined, value: 'open', context: { lastId: 0 } }),
  transition(snapshot, event, scope) {
    if (snapshot.value === 'closed') return snapshot;
    if (event.type === 'CLOSE') return { status: 'done', output: undefined, error: undefined, value: 'closed', context: snapshot.context };
    if (!isUnseen({ context: snapshot.context, event })) return snapshot;
    scope.emit(messageFrame({ event }));
    return { status: 'active', output: undefined, error: undefined, value: 'open', context: recordMessage({ event }) };
  },
  getPersistedSnapshot: (snapshot) => snapshot,
};

export type UserActorLogic = typeof userActorLogic;
