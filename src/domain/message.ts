// A pushed message: recorded once under its id; delivery to the clients of its recipients
// follows the store's subscription on every node.
import type { Decider } from './decider.js';
import type { MessagePushed } from './events.js';

export type PushMessage = { type: 'PushMessage' } & MessagePushed['data'];

export const messageDecider: Decider<{ pushed: boolean }, PushMessage, MessagePushed> = {
  initialState: () => ({ pushed: false }),
  decide(command, state) {
    // Recorded already under this id (a retry of the same Idempotency-Key's use): not again.
    if (state.pushed) return [];
    const { type: _, ...data } = command;
    return [{ type: 'MessagePushed', data }];
  },
  evolve: () => ({ pushed: true }),
};
