// One sign-in attempt through the platform's OpenID 2.0 provider, whatever it signs in (a
// realtime client, the operator console): the signed single-use state bound to the browser's
// login cookie (nothing recorded until the platform has answered), every check of the assertion
// the callback receives, and the attempt's end in the log. What the verified account is then
// signed in to is the caller's.
import { randomBytes } from 'node:crypto';
import { failureOf, NotFoundError, PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../domain/errors.js';
import { streams, type LoginFailureReason } from '../domain/events.js';
import { loginDecider, SignInError, type LoginCommand } from '../domain/login.js';
import { readAssertion } from '../domain/openId.js';
import type { CommunityPlatform } from '../community/port.js';
import type { Logger } from '../log.js';
import type { UserRecord } from '../projections/users.js';
import { handleCommand } from '../services/commandHandler.js';
import type { WorkContext } from '../system/workContext.js';
import type { UserSync } from '../services/userSync.js';
import type { Clock } from '../system/clock.js';
import type { EventStore } from '../store/port.js';
import { hashBinding } from './browserCookies.js';
import { hashState, SignedLoginStates } from './signedLoginState.js';

/**
 * How long a callback holds an attempt while it asks the platform (two platform calls, each
 * bounded by COMMUNITY_TIMEOUT_MS, and a few appends); a claim older than this was left by a
 * node that died, and the next delivery may take it over.
 */
const CLAIM_MS = 60_000;

export { hashState };

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
  /** Signs the states (the session secret: every node must share it). */
  secret: Buffer;
}

/** An attempt whose assertion the platform confirmed, still claimed by this callback. */
export interface VerifiedAttempt {
  /** The callback's request: what the sign-in records is stamped with it. */
  work: WorkContext;
  oId: string;
  /** What the attempt was started for (a realtime client id, or a marker of the caller's). */
  clientId: string;
  /** The login page was opened by the browser that holds the connection. */
  holdsConnection: boolean;
  /** Closes the attempt as completed by this user, who now holds this session. */
  succeed(userId: string, sessionId: string): Promise<void>;
  /** Closes the attempt as failed (the account may not sign in here). */
  fail(reason: LoginFailureReason, detail: string): Promise<void>;
}

export class OpenIdAttempts {
  private readonly states: SignedLoginStates;

  constructor(private readonly options: OpenIdAttemptsOptions) {
    this.states = new SignedLoginStates(options.secret);
  }

  /**
   * A fresh signed state for `clientId`, bound to the browser's login cookie value, and the
   * platform's sign-in URL that returns to `callbackUrl` with it. Records nothing.
   */
  async start(clientId: string, callbackUrl: string, loginBinding: string, holdsConnection = false): Promise<string> {
    const { platform, clock, publicUrl, stateTtlMs } = this.options;
    const state = this.states.issue({ clientId, callbackUrl, expiresMs: Date.parse(clock.now()) + stateTtlMs, browser: hashBinding(loginBinding), holdsConnection });
    return platform.openIdLoginUrl({ returnTo: returnTo(callbackUrl, state), realm: new URL(publicUrl()).origin });
  }

  /**
   * Callback: every check of the state and the assertion, the platform's verification, then
   * `signIn`. `ours` tells the caller's attempts from others' (any other reads as unknown);
   * `loginBinding` is the browser's login cookie. Throws SignInError on any refusal. Only what
   * happens after the platform answered is recorded.
   */
  async complete<T>(
    work: WorkContext,
    query: Query,
    loginBinding: string | undefined,
    ours: (clientId: string) => boolean,
    signIn: (attempt: VerifiedAttempt) => Promise<T>,
  ): Promise<T> {
    const { platform, clock } = this.options;
    const state = single(query.state);
    const login = state === undefined ? undefined : this.states.read(state);
    if (!state || !login || !ours(login.clientId)) throw new SignInError('unknown-state', 'This sign-in link is not known.');
    // Before anything else is said about the state: a browser that did not start it learns nothing.
    if (!loginBinding || login.browser !== hashBinding(loginBinding)) throw new SignInError('other-browser', 'This sign-in was not started in this browser.');
    const stateHash = hashState(state);
    if (Date.parse(clock.now()) > login.expiresMs) throw new SignInError('expired', 'This sign-in link has expired.');
    if (query.error !== undefined) throw new SignInError('cancelled', 'Sign-in was cancelled on the community platform.');
    const assertion = readAssertion(query, { opEndpoint: platform.openIdEndpoint, identityPattern: platform.identityPattern, returnTo: returnTo(login.callbackUrl, state) });
    if (!assertion.ok) throw new SignInError('invalid-assertion', 'The community platform’s answer could not be verified.');

    // One delivery at a time, on any node, asks the platform: it accepts a nonce once, so a
    // second delivery's is_valid:false must not close the attempt while the first finishes.
    const claim = randomBytes(16).toString('base64url');
    const clientId = login.clientId;
    const now = clock.now();
    const until = new Date(Date.parse(now) + CLAIM_MS).toISOString();
    await this.record(work, { type: 'ClaimLogin', stateHash, clientId, claim, until, expires: new Date(login.expiresMs).toISOString(), at: now });
    try {
      await this.verify(work, stateHash, clientId, claim, assertion.fields);
      return await signIn({
        work,
        oId: assertion.oId,
        clientId,
        holdsConnection: login.holdsConnection,
        succeed: async (userId, sessionId) => {
          await this.record(work, { type: 'CompleteLogin', stateHash, clientId, claim, userId, oId: assertion.oId, sessionId, at: clock.now() });
        },
        fail: (reason, detail) => this.fail(work, stateHash, clientId, claim, reason, detail),
      });
    } catch (error) {
      if (!(error instanceof SignInError) || error.reason === 'platform-unavailable' || error.reason === 'bound-client') {
        // Unreleased, the claim still lapses after CLAIM_MS; the original error is the one to report.
        await this.record(work, { type: 'ReleaseLogin', stateHash, clientId, claim, at: clock.now() }).catch((releaseError: unknown) =>
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
      return (await this.options.userSync.sync(attempt.work, attempt.oId)).user;
    } catch (thrown) {
      const error = failureOf(thrown);
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

  /** The platform's own check_authentication of the assertion. */
  private async verify(work: WorkContext, stateHash: string, clientId: string, claim: string, fields: Record<string, string>): Promise<void> {
    const { platform, log } = this.options;
    let genuine: boolean;
    try {
      genuine = await platform.verifyAssertion(fields);
    } catch (error) {
      // Nothing recorded: the platform never answered, the user may simply retry.
      log.warn({ err: error }, 'OpenID verification failed to reach the platform');
      throw new SignInError('platform-unavailable', 'The community platform could not be reached to verify the sign-in.');
    }
    if (!genuine) {
      await this.fail(work, stateHash, clientId, claim, 'invalid-assertion', 'the platform answered is_valid:false');
      throw new SignInError('invalid-assertion', 'The community platform did not confirm this sign-in.');
    }
  }

  /** Closes the attempt as failed after the platform answered; one closed meanwhile stays as it is. */
  private async fail(work: WorkContext, stateHash: string, clientId: string, claim: string, reason: LoginFailureReason, detail: string): Promise<void> {
    try {
      await this.record(work, { type: 'FailLogin', stateHash, clientId, claim, reason, detail, at: this.options.clock.now() });
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
    }
  }

  private async record(work: WorkContext, command: LoginCommand): Promise<void> {
    await handleCommand(work, this.options.store, streams.login(command.stateHash), loginDecider, command);
  }
}

function returnTo(callbackUrl: string, state: string): string {
  return `${callbackUrl}?state=${state}`;
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
