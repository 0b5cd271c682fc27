// Browser sessions: started by a successful sign-in, ended by logout or by time. Recorded in
// `session-<sessionId>` so that a logout on one node ends the session on every node.
import type { Decider } from './decider.js';
import { ConflictError } from './errors.js';
import type { SessionEvent } from './events.js';

export type SessionState = { status: 'none' } | { status: 'active'; sessionId: string; userId: string; oId: string; expires: string } | { status: 'ended'; sessionId: string };

export type StartSession = { type: 'StartSession'; sessionId: string; userId: string; oId: string; expires: string; at: string };
export type EndSession = { type: 'EndSession'; sessionId: string; at: string };
export type SessionCommand = StartSession | EndSession;

export const sessionDecider: Decider<SessionState, SessionCommand, SessionEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'StartSession': {
        if (state.status !== 'none') throw new ConflictError(`Session ${command.sessionId} already exists`);
        const { sessionId, userId, oId, expires, at } = command;
        return [{ type: 'SessionStarted', data: { sessionId, userId, oId, expires, at } }];
      }
      case 'EndSession':
        // Logging out twice, or after expiry, records nothing the second time.
        return state.status === 'active' ? [{ type: 'SessionEnded', data: { sessionId: command.sessionId, at: command.at } }] : [];
    }
  },

  evolve(_state, event) {
    switch (event.type) {
      case 'SessionStarted':
        return { status: 'active', ...event.data };
      case 'SessionEnded':
        return { status: 'ended', sessionId: event.data.sessionId };
    }
  },
};

/** The session if it is active at `now` (ISO), else undefined. */
export function liveSession(state: SessionState, now: string): Extract<SessionState, { status: 'active' }> | undefined {
  return state.status === 'active' && state.expires > now ? state : undefined;
}
