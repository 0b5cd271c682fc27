// One sign-in attempt (design.md §4, community-platform.md "Sign-in"): the login page starts it
// with a random state bound to a client; the callback consumes the state exactly once — it
// completes or fails — and the append with the expected revision makes "once" hold across
// nodes: of two callbacks racing with the same state, one append loses.
import type { Decider } from './decider.js';
import { AppError } from './errors.js';
import type { LoginEvent, LoginFailureReason } from './events.js';

/** Why a sign-in step was refused; the login routes turn each reason into a page. */
export type SignInRefusal =
  | 'missing-client-id'
  | 'unknown-client'
  | 'unknown-state'
  | 'used-state'
  | 'platform-unavailable'
  | LoginFailureReason;

export class SignInError extends AppError {
  constructor(
    readonly reason: SignInRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface LoginAttempt {
  stateHash: string;
  clientId: string;
  callbackUrl: string;
  expires: string;
}
export type LoginState = { status: 'none' } | ({ status: 'started' | 'completed' | 'failed' } & LoginAttempt);

export type StartLogin = { type: 'StartLogin'; stateHash: string; clientId: string; callbackUrl: string; expires: string; at: string };
export type CompleteLogin = { type: 'CompleteLogin'; userId: string; oId: string; sessionId: string; at: string };
export type FailLogin = { type: 'FailLogin'; reason: LoginFailureReason; detail: string; at: string };
export type LoginCommand = StartLogin | CompleteLogin | FailLogin;

/** The state exists, is unused and has not expired at `at`; otherwise throws the refusal. */
export function assertUsable(state: LoginState, at: string): asserts state is { status: 'started' } & LoginAttempt {
  if (state.status === 'none') throw new SignInError('unknown-state', 'This sign-in link is not known.');
  if (state.status !== 'started') throw new SignInError('used-state', 'This sign-in link has already been used.');
  if (at > state.expires) throw new SignInError('expired', 'This sign-in link has expired.');
}

export const loginDecider: Decider<LoginState, LoginCommand, LoginEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'StartLogin': {
        if (state.status !== 'none') throw new SignInError('used-state', 'This sign-in state is already taken.');
        const { stateHash, clientId, callbackUrl, expires, at } = command;
        return [{ type: 'LoginStarted', data: { stateHash, clientId, callbackUrl, expires, at } }];
      }
      case 'CompleteLogin': {
        assertUsable(state, command.at);
        const { userId, oId, sessionId, at } = command;
        return [{ type: 'LoginCompleted', data: { stateHash: state.stateHash, clientId: state.clientId, userId, oId, sessionId, at } }];
      }
      case 'FailLogin': {
        // Expired or not, a state that is still open is closed by its failure; a used one stays as it is.
        if (state.status === 'none') throw new SignInError('unknown-state', 'This sign-in link is not known.');
        if (state.status !== 'started') throw new SignInError('used-state', 'This sign-in link has already been used.');
        const { reason, detail, at } = command;
        return [{ type: 'LoginFailed', data: { stateHash: state.stateHash, clientId: state.clientId, reason, detail, at } }];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'LoginStarted':
        return { status: 'started', ...event.data };
      case 'LoginCompleted':
        return state.status === 'none' ? state : { ...state, status: 'completed' };
      case 'LoginFailed':
        return state.status === 'none' ? state : { ...state, status: 'failed' };
    }
  },
};
