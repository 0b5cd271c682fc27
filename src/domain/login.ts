// How a sign-in attempt ends (docs/architecture.md, "Realtime"): completed by the account the
// platform confirmed, or failed after the platform answered.
import type { Decider } from './decider.js';
import { AppError } from './errors.js';
import type { LoginEvent, LoginFailureReason } from './events.js';

/** Why a sign-in step was refused; the login routes turn each reason into a page. */
export type SignInRefusal =
  | 'missing-client-id'
  | 'bound-client'
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

/**
 * A sign-in attempt's record in the log. Nothing is recorded when a login page starts one (its
 * state travels signed, in the browser: src/realtime/signedLoginState.ts). A callback about to
 * ask the platform claims the attempt, so that one delivery at a time, on any node, asks it (the
 * platform accepts an assertion's nonce once); it then completes or fails it, or releases it
 * when the platform could not answer. Appends at the expected revision make "once" hold across
 * nodes. Streams from before begin with LoginStarted, which reads as open.
 */
export type LoginState = { status: 'none' | 'open' | 'completed' | 'failed' } | { status: 'claimed'; claim: string; claimUntil: string };

export type ClaimLogin = { type: 'ClaimLogin'; stateHash: string; clientId: string; claim: string; until: string; expires: string; at: string };
export type ReleaseLogin = { type: 'ReleaseLogin'; stateHash: string; clientId: string; claim: string; at: string };
export type CompleteLogin = { type: 'CompleteLogin'; stateHash: string; clientId: string; claim: string; userId: string; oId: string; sessionId: string; at: string };
export type FailLogin = { type: 'FailLogin'; stateHash: string; clientId: string; claim: string; reason: LoginFailureReason; detail: string; at: string };
export type LoginCommand = ClaimLogin | ReleaseLogin | CompleteLogin | FailLogin;

const used = () => new SignInError('used-state', 'This sign-in link has already been used.');

/** Open, or claimed by a callback whose claim ran out (a node that died while asking). */
const claimable = (state: LoginState, at: string) => state.status === 'none' || state.status === 'open' || (state.status === 'claimed' && at > state.claimUntil);
const holds = (state: LoginState, claim: string) => state.status === 'claimed' && state.claim === claim;

export const loginDecider: Decider<LoginState, LoginCommand, LoginEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    const { stateHash, clientId, claim, at } = command;
    switch (command.type) {
      case 'ClaimLogin':
        if (!claimable(state, at)) throw used();
        return [{ type: 'LoginClaimed', data: { stateHash, clientId, claim, until: command.until, expires: command.expires, at } }];
      case 'ReleaseLogin':
        return holds(state, claim) ? [{ type: 'LoginReleased', data: { stateHash, clientId, claim, at } }] : [];
      case 'CompleteLogin': {
        // Only the holder of the claim completes, even after it ran out: nobody took it over.
        if (!holds(state, claim)) throw used();
        const { userId, oId, sessionId } = command;
        return [{ type: 'LoginCompleted', data: { stateHash, clientId, userId, oId, sessionId, at } }];
      }
      case 'FailLogin':
        if (!holds(state, claim)) throw used();
        return [{ type: 'LoginFailed', data: { stateHash, clientId, reason: command.reason, detail: command.detail, at } }];
    }
  },

  evolve(_state, event) {
    switch (event.type) {
      case 'LoginStarted':
      case 'LoginReleased':
        return { status: 'open' };
      case 'LoginClaimed':
        return { status: 'claimed', claim: event.data.claim, claimUntil: event.data.until };
      case 'LoginCompleted':
        return { status: 'completed' };
      case 'LoginFailed':
        return { status: 'failed' };
    }
  },
};
