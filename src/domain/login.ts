// One sign-in attempt (design.md §4, community-platform.md "Sign-in"): the login page starts it
// with a random state bound to a client and to the browser's login cookie; a callback claims it
// while it asks the platform, then completes or fails it — or releases it when the platform could
// not answer. Appends at the expected revision make "once" hold across nodes: of several
// callbacks delivering one assertion at once, one claims it and the others are refused, so a
// loser can never close the attempt under the winner.
import type { Decider } from './decider.js';
import { AppError } from './errors.js';
import type { LoginEvent, LoginFailureReason } from './events.js';

/** Why a sign-in step was refused; the login routes turn each reason into a page. */
export type SignInRefusal =
  | 'missing-client-id'
  | 'unknown-client'
  | 'unknown-state'
  | 'other-browser'
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
  browser?: string;
}
export type LoginState =
  | { status: 'none' }
  | ({ status: 'started' | 'completed' | 'failed' } & LoginAttempt)
  | ({ status: 'claimed'; claim: string; claimUntil: string } & LoginAttempt);

export type StartLogin = { type: 'StartLogin'; stateHash: string; clientId: string; callbackUrl: string; expires: string; browser: string; at: string };
export type ClaimLogin = { type: 'ClaimLogin'; claim: string; until: string; at: string };
export type ReleaseLogin = { type: 'ReleaseLogin'; claim: string; at: string };
export type CompleteLogin = { type: 'CompleteLogin'; claim: string; userId: string; oId: string; sessionId: string; at: string };
/** `claim`: the claim the failing callback holds, if it got that far. */
export type FailLogin = { type: 'FailLogin'; claim?: string; reason: LoginFailureReason; detail: string; at: string };
export type LoginCommand = StartLogin | ClaimLogin | ReleaseLogin | CompleteLogin | FailLogin;

type Open = Extract<LoginState, { status: 'started' | 'claimed' }>;

const used = () => new SignInError('used-state', 'This sign-in link has already been used.');

/** Open and not held by another callback at `at` (a claim past its time was left by a dead node). */
function isFree(state: LoginState, at: string, claim?: string): state is Open {
  if (state.status === 'started') return true;
  return state.status === 'claimed' && (state.claim === claim || at > state.claimUntil);
}

/** The state exists, is open, free and has not expired at `at`; otherwise throws the refusal. */
export function assertUsable(state: LoginState, at: string): asserts state is Open {
  if (state.status === 'none') throw new SignInError('unknown-state', 'This sign-in link is not known.');
  if (!isFree(state, at)) throw used();
  if (at > state.expires) throw new SignInError('expired', 'This sign-in link has expired.');
}

export const loginDecider: Decider<LoginState, LoginCommand, LoginEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'StartLogin': {
        if (state.status !== 'none') throw new SignInError('used-state', 'This sign-in state is already taken.');
        const { stateHash, clientId, callbackUrl, expires, browser, at } = command;
        return [{ type: 'LoginStarted', data: { stateHash, clientId, callbackUrl, expires, browser, at } }];
      }
      case 'ClaimLogin': {
        assertUsable(state, command.at);
        const { claim, until, at } = command;
        return [{ type: 'LoginClaimed', data: { stateHash: state.stateHash, clientId: state.clientId, claim, until, at } }];
      }
      case 'ReleaseLogin': {
        if (state.status !== 'claimed' || state.claim !== command.claim) return [];
        return [{ type: 'LoginReleased', data: { stateHash: state.stateHash, clientId: state.clientId, claim: command.claim, at: command.at } }];
      }
      case 'CompleteLogin': {
        // Only the holder of the claim completes, even after the state's expiry: it claimed in time.
        if (state.status === 'none') throw new SignInError('unknown-state', 'This sign-in link is not known.');
        if (state.status !== 'claimed' || state.claim !== command.claim) throw used();
        const { userId, oId, sessionId, at } = command;
        return [{ type: 'LoginCompleted', data: { stateHash: state.stateHash, clientId: state.clientId, userId, oId, sessionId, at } }];
      }
      case 'FailLogin': {
        // Expired or not, an open state is closed by its failure; a used or held one stays as it is.
        if (state.status === 'none') throw new SignInError('unknown-state', 'This sign-in link is not known.');
        if (!isFree(state, command.at, command.claim)) throw used();
        const { reason, detail, at } = command;
        return [{ type: 'LoginFailed', data: { stateHash: state.stateHash, clientId: state.clientId, reason, detail, at } }];
      }
    }
  },

  evolve(state, event) {
    if (event.type === 'LoginStarted') {
      const { stateHash, clientId, callbackUrl, expires, browser } = event.data;
      return { status: 'started', stateHash, clientId, callbackUrl, expires, ...(browser !== undefined && { browser }) };
    }
    if (state.status === 'none') return state;
    const { stateHash, clientId, callbackUrl, expires, browser } = state;
    const attempt: LoginAttempt = { stateHash, clientId, callbackUrl, expires, ...(browser !== undefined && { browser }) };
    switch (event.type) {
      case 'LoginClaimed':
        return { ...attempt, status: 'claimed', claim: event.data.claim, claimUntil: event.data.until };
      case 'LoginReleased':
        return { ...attempt, status: 'started' };
      case 'LoginCompleted':
        return { ...attempt, status: 'completed' };
      case 'LoginFailed':
        return { ...attempt, status: 'failed' };
    }
  },
};
