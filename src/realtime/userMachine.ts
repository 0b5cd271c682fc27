// A signed-in user's live messages on this node (design.md §4): `open` —CLOSE→ `closed` once the
// user's last connection here closed. A push is one MESSAGE event for each user it names, however
// many connections the user holds, and its transition emits the one message frame the hub writes
// to each of them (to those whose client actor has not sent that id yet, see clientMachine.ts).
// Messages leave in log order: one at or below `lastId` was emitted already and is dropped.
import { assign, emit, setup } from 'xstate';
import type { Frame } from './clientMachine.js';
import { isUnseen, messageFrame, recordMessage, type MessageEvent } from './messages.js';

export const userMachine = setup({
  types: {
    context: {} as { lastId: number },
    events: {} as MessageEvent | { type: 'CLOSE' },
    emitted: {} as Frame,
  },
  guards: { isUnseen },
  actions: {
    recordMessage: assign(recordMessage),
    emitMessage: emit(messageFrame),
  },
}).createMachine({
  id: 'realtimeUser',
  context: { lastId: 0 },
  initial: 'open',
  states: {
    open: {
      on: {
        MESSAGE: { guard: 'isUnseen', actions: ['recordMessage', 'emitMessage'] },
        CLOSE: 'closed',
      },
    },
    closed: { type: 'final' },
  },
});

export type UserMachine = typeof userMachine;
