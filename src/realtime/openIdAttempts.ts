// One sign-in attempt through the platform's OpenID 2.0 provider, whatever it signs in (a
// realtime client, the operator console): the single-use state bound to the browser's login
// cookie, every check of the assertion the callback receives, one delivery at a time asking the
// platform, and the closing of the attempt. What the verified account is then signed in to is
// the caller's.
import { createHash, randomBytes } from 'node:crypto';
import { fold } from '../domain/decider.js';
import { NotFoundError, PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../domain/errors.js';
import { streams, type LoginEvent, type LoginFailureReason } from '../domain/events.js';
import { assertUsable, loginDecider, SignInError } from '../domain/login.js';
import { readAssertion } from '../domain/openId.js';
import type { CommunityPlatform } from '../community/port.js';
import type { Logger } from '../log.js';
import type { UserRecord } from '../projections/users.js';
import { handleCommand } from '../services/commandHandler.js';
import type { UserSync } from '../services/userSync.js';
import type { Clock } from '../system/clock.js';
import type { EventStore } from '../store/port.js';
import { hashBinding } from './browserCookies.js';

const STATE = /^[A-Za-z0-9_-]{43}$/;
/**
 * How long a callback holds an attempt while it asks the platform (two platform calls, each
 * bounded by COMMUNITY_TIMEOUT_MS, and a few appends); a claim older than this was left by a
 * node that died, and the next delivery may take it over.
 */
const CLAIM_MS = 60_000;

export const hashState = (state: string) => createHash('sha256').update(state).digest('base64url');

export type Query = Record<string, string | string[] | undefined>;

export interface OpenIdAttemptsOptions {
  store: EventStore;
  platform: CommunityPlatform;
  userSync: UserSync;
  clock: Clock;
  log: Logger;
  /** External base URL of the service (PUBLIC_URL, or its own address once listening). */
  publicUrl: () => string;
  stateTtlMs: number;
}

/** An attempt whose assertion the platform confirmed, still claimed by this callback. */
export interface VerifiedAttempt {
  oId: string;
  /** What the attempt was started for (a realtime client id, or a marker of the caller's). */
  clientId: string;
  /** Closes the attempt as completed by this user, who now holds this session. */
  succeed(userId: string, sessionId: string): Promise<void>;
  /** Closes the attempt as failed (the account may not sign in here). */
  fail(reason: LoginFailureReason, detail: string): Promise<void>;
}

export class OpenIdAttempts {
  constructor(private readonly options: OpenIdAttemptsOptions) {}

  /**
   * Records a fresh single-use state for `clientId`, bound to the browser's login cookie value,
   * and answers the platform's sign-in URL that returns to `callbackUrl` with it.
   */
  async start(clientId: string, callbackUrl: string, loginBinding: string): Promise<string> {
    const { store, platform, clock, publicUrl, stateTtlMs } = this.options;
    const state = randomBytes(32).toString('base64url'); // 256 bits
    const stateHash = hashState(state);
    const at = clock.now();
    const expires = new Date(Date.parse(at) + stateTtlMs).toISOString();
    await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'StartLogin', stateHash, clientId, callbackUrl, expires, browser: hashBinding(loginBinding), at });
    return platform.openIdLoginUrl({ returnTo: returnTo(callbackUrl, state), realm: new URL(publicUrl()).origin });
  }

  /**
   * Callback: every check of the assertion, the claim, the platform's verification, then
   * `signIn` while the claim is held. `ours` tells the caller's attempts from others' (any other
   * reads as unknown); `loginBinding` is the browser's login cookie. Throws SignInError on any
   * refusal.
   */
  async complete<T>(query: Query, loginBinding: string | undefined, ours: (clientId: string) => boolean, signIn: (attempt: VerifiedAttempt) => Promise<T>): Promise<T> {
    const { store, platform, clock } = this.options;
    const state = single(query.state);
    if (!state || !STATE.test(state)) throw new SignInError('unknown-state', 'This sign-in link is not known.');
    const stateHash = hashState(state);
    const login = fold(loginDecider, (await store.readStream(streams.login(stateHash))) as unknown as LoginEvent[]);
    if (login.status === 'none' || !ours(login.clientId)) throw new SignInError('unknown-state', 'This sign-in link is not known.');
    // Before anything else is said about the state: a browser that did not start it learns nothing.
    if (!login.browser || !loginBinding || login.browser !== hashBinding(loginBinding)) {
      throw new SignInError('other-browser', 'This sign-in was not started in this browser.');
    }
    const now = clock.now();
    try {
      assertUsable(login, now);
    } catch (error) {
      if (error instanceof SignInError && error.reason === 'expired') await this.fail(stateHash, undefined, 'expired', 'state expired', now);
      throw error;
    }
    if (query.error !== undefined) {
      await this.fail(stateHash, undefined, 'cancelled', `platform error: ${String(single(query.error) ?? '')}`.slice(0, 200), now);
      throw new SignInError('cancelled', 'Sign-in was cancelled on the community platform.');
    }
    const assertion = readAssertion(query, { opEndpoint: platform.openIdEndpoint, identityPattern: platform.identityPattern, returnTo: returnTo(login.callbackUrl, state) });
    if (!assertion.ok) {
      await this.fail(stateHash, undefined, 'invalid-assertion', assertion.problem, now);
      throw new SignInError('invalid-assertion', 'The community platform’s answer could not be verified.');
    }

    // One delivery at a time asks the platform: the platform accepts a nonce once, so a second
    // delivery's is_valid:false must not close the attempt while the first is still finishing.
    const claim = randomBytes(16).toString('base64url');
    const until = new Date(Date.parse(now) + CLAIM_MS).toISOString();
    await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'ClaimLogin', claim, until, at: now });
    try {
      await this.verify(stateHash, claim, assertion.fields);
      return await signIn({
        oId: assertion.oId,
        clientId: login.clientId,
        succeed: async (userId, sessionId) => {
          await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'CompleteLogin', claim, userId, oId: assertion.oId, sessionId, at: clock.now() });
        },
        fail: (reason, detail) => this.fail(stateHash, claim, reason, detail, clock.now()),
      });
    } catch (error) {
      if (!(error instanceof SignInError) || error.reason === 'platform-unavailable') {
        // Unreleased, the claim still lapses after CLAIM_MS; the original error is the one to report.
        await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'ReleaseLogin', claim, at: clock.now() }).catch((releaseError: unknown) =>
          this.options.log.warn({ err: releaseError }, 'could not release a sign-in claim'),
        );
      }
      throw error;
    }
  }

  /**
   * The verified account as a user of this service (synced from the platform); an account the
   * platform does not know closes the attempt.
   */
  async userOf(attempt: VerifiedAttempt): Promise<UserRecord> {
    try {
      return (await this.options.userSync.sync(attempt.oId)).user;
    } catch (error) {
      if (error instanceof NotFoundError) {
        await attempt.fail('unknown-user', `no user ${attempt.oId} on the platform`);
        throw new SignInError('unknown-user', 'The community platform does not know this account.');
      }
      if (error instanceof PlatformUnavailableError || error instanceof PlatformTimeoutError || error instanceof PlatformRejectedError) {
        throw new SignInError('platform-unavailable', 'The community platform could not be reached to load the account.');
      }
      throw error;
    }
  }

  /** The platform's own check_authentication of the assertion, with the attempt claimed. */
  private async verify(stateHash: string, claim: string, fields: Record<string, string>): Promise<void> {
    const { platform, clock, log } = this.options;
    let genuine: boolean;
    try {
      genuine = await platform.verifyAssertion(fields);
    } catch (error) {
      // The attempt is released: the platform never answered, the user may simply retry.
      log.warn({ err: error }, 'OpenID verification failed to reach the platform');
      throw new SignInError('platform-unavailable', 'The community platform could not be reached to verify the sign-in.');
    }
    if (!genuine) {
      await this.fail(stateHash, claim, 'invalid-assertion', 'the platform answered is_valid:false', clock.now());
      throw new SignInError('invalid-assertion', 'The community platform did not confirm this sign-in.');
    }
  }

  /** Closes the attempt as failed; a concurrent callback that closed or holds it wins, silently. */
  private async fail(stateHash: string, claim: string | undefined, reason: LoginFailureReason, detail: string, at: string): Promise<void> {
    try {
      await handleCommand(this.options.store, streams.login(stateHash), loginDecider, { type: 'FailLogin', ...(claim !== undefined && { claim }), reason, detail, at });
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
    }
  }
}

function returnTo(callbackUrl: string, state: string): string {
  return `${callbackUrl}?state=${state}`;
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
