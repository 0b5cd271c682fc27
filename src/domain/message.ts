// A pushed message (spec §4.6): recorded once under its own id; delivery to the clients of its
// recipients follows the store's subscription on every node.
import type { Decider } from './decider.js';
import { ConflictError } from './errors.js';
import type { MessagePushed } from './events.js';

export type PushMessage = { type: 'PushMessage' } & MessagePushed['data'];

export const messageDecider: Decider<{ pushed: boolean }, PushMessage, MessagePushed> = {
  initialState: () => ({ pushed: false }),
  decide(command, state) {
    if (state.pushed) throw new ConflictError(`message ${command.messageId} was pushed already`);
    const { type: _, ...data } = command;
    return [{ type: 'MessagePushed', data }];
  },
  evolve: () => ({ pushed: true }),
};
