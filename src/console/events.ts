// The console's own facts: an operator's session, started by a sign-in and ended by logout or
// by time. Not DomainEvents: no read model folds them; each console request reads its session's
// stream, so a logout on one node ends the session on every node at once.
import type { Decider } from '../domain/decider.js';
import { ConflictError } from '../domain/errors.js';

export type ConsoleSessionStarted = { type: 'ConsoleSessionStarted'; data: { sessionId: string; oId: string; userId: string; expires: string; at: string } };
export type ConsoleSessionEnded = { type: 'ConsoleSessionEnded'; data: { sessionId: string; at: string } };
export type ConsoleSessionEvent = ConsoleSessionStarted | ConsoleSessionEnded;

export const consoleSessionStream = (sessionId: string) => `consolesession-${sessionId}`;

export type ConsoleSessionState = { status: 'none' } | ({ status: 'active' } & ConsoleSessionStarted['data']) | { status: 'ended' };

export type ConsoleSessionCommand =
  | { type: 'StartConsoleSession'; sessionId: string; oId: string; userId: string; expires: string; at: string }
  | { type: 'EndConsoleSession'; sessionId: string; at: string };

export const consoleSessionDecider: Decider<ConsoleSessionState, ConsoleSessionCommand, ConsoleSessionEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'StartConsoleSession': {
        if (state.status !== 'none') throw new ConflictError(`Console session ${command.sessionId} already exists`);
        const { type: _, ...data } = command;
        return [{ type: 'ConsoleSessionStarted', data }];
      }
      case 'EndConsoleSession':
        // Logging out twice records nothing the second time.
        return state.status === 'active' ? [{ type: 'ConsoleSessionEnded', data: { sessionId: command.sessionId, at: command.at } }] : [];
    }
  },

  evolve(_state, event) {
    return event.type === 'ConsoleSessionStarted' ? { status: 'active', ...event.data } : { status: 'ended' };
  },
};
