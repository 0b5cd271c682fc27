// Sign-in through the platform's OpenID 2.0 provider (community-platform.md "Sign-in",
// design.md §4). The login page starts an attempt bound to a connected client and to the
// browser; the callback checks the assertion, claims the attempt, has the platform verify it,
// syncs the user, starts a session and appends ClientSignedIn — which reaches the connection
// through the store, on any node.
import { createHash, randomBytes } from 'node:crypto';
import { clientDecider } from '../domain/client.js';
import { fold } from '../domain/decider.js';
import { NotFoundError, PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../domain/errors.js';
import { streams, type LoginEvent, type LoginFailureReason } from '../domain/events.js';
import { assertUsable, loginDecider, SignInError } from '../domain/login.js';
import { readAssertion } from '../domain/openId.js';
import { sessionDecider } from '../domain/session.js';
import type { CommunityPlatform } from '../community/port.js';
import type { Logger } from '../log.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { UserRecord } from '../projections/users.js';
import { handleCommand } from '../services/commandHandler.js';
import type { Clock } from '../system/clock.js';
import type { UserSync } from '../services/userSync.js';
import type { EventStore } from '../store/port.js';
import { hashBinding } from './browserCookies.js';
import type { Clients } from './clients.js';
import { newSessionId } from './sessions.js';

const STATE = /^[A-Za-z0-9_-]{43}$/;
/**
 * How long a callback holds an attempt while it asks the platform (two platform calls, each
 * bounded by COMMUNITY_TIMEOUT_MS, and a few appends); a claim older than this was left by a
 * node that died, and the next delivery may take it over.
 */
const CLAIM_MS = 60_000;

export const hashState = (state: string) => createHash('sha256').update(state).digest('base64url');

export interface SignInOptions {
  store: EventStore;
  runner: ProjectionRunner;
  platform: CommunityPlatform;
  userSync: UserSync;
  clients: Clients;
  clock: Clock;
  log: Logger;
  /** External base URL of the service (PUBLIC_URL, or its own address once listening). */
  publicUrl: () => string;
  communityName: string;
  stateTtlMs: number;
  sessionTtlMs: number;
}

export interface LoginStart {
  /** The platform's sign-in page for this attempt. */
  platformUrl: string;
  /** The browser opening the login page holds the connection (its client binding cookie matches). */
  sameBrowser: boolean;
  /** The Origin that opened the connection, as recorded at connect. */
  origin?: string;
}

export interface SignedIn {
  user: UserRecord;
  sessionId: string;
  /** False when the connection closed before the sign-in finished (the session still holds). */
  clientBound: boolean;
}

type Query = Record<string, string | string[] | undefined>;

export class SignIn {
  constructor(private readonly options: SignInOptions) {}

  /** The URL of the callback this service serves (return_to without its state). */
  callbackUrl(): string {
    return `${this.options.publicUrl()}/${this.options.communityName}/callback`;
  }

  /**
   * Login page: checks the client, records a fresh single-use state bound to the browser's login
   * cookie, and answers the platform URL — and whether this browser is the one holding the
   * connection (else the page asks the user to confirm, naming the site that opened it).
   */
  async start(clientId: string | undefined, browser: { login: string; client: string | undefined }): Promise<LoginStart> {
    const { store, platform, clock, publicUrl, stateTtlMs } = this.options;
    if (!clientId) throw new SignInError('missing-client-id', 'The client_id parameter is missing.');
    // The store, not a read model: the connection may be held by a node whose events this node
    // has not applied yet.
    const opener = await this.options.clients.opener(clientId);
    if (!opener) throw new SignInError('unknown-client', 'No open connection has this client_id.');
    const state = randomBytes(32).toString('base64url'); // 256 bits
    const stateHash = hashState(state);
    const callbackUrl = this.callbackUrl();
    const at = clock.now();
    const expires = new Date(Date.parse(at) + stateTtlMs).toISOString();
    await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'StartLogin', stateHash, clientId, callbackUrl, expires, browser: hashBinding(browser.login), at });
    return {
      platformUrl: platform.openIdLoginUrl({ returnTo: returnTo(callbackUrl, state), realm: new URL(publicUrl()).origin }),
      sameBrowser: browser.client !== undefined && opener.browser === hashBinding(browser.client),
      ...(opener.origin !== undefined && { origin: opener.origin }),
    };
  }

  /**
   * Callback: every check of the assertion, then the sign-in. `loginBinding` is the browser's
   * login cookie. Throws SignInError on any refusal.
   */
  async complete(query: Query, loginBinding: string | undefined): Promise<SignedIn> {
    const { store, platform, clock } = this.options;
    const state = single(query.state);
    if (!state || !STATE.test(state)) throw new SignInError('unknown-state', 'This sign-in link is not known.');
    const stateHash = hashState(state);
    const login = fold(loginDecider, (await store.readStream(streams.login(stateHash))) as unknown as LoginEvent[]);
    if (login.status === 'none') throw new SignInError('unknown-state', 'This sign-in link is not known.');
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
      return await this.signInClaimed(stateHash, claim, login.clientId, assertion);
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

  /** With the attempt claimed: the platform's verification, the user sync, the session. */
  private async signInClaimed(stateHash: string, claim: string, clientId: string, assertion: { oId: string; fields: Record<string, string> }): Promise<SignedIn> {
    const { store, runner, platform, userSync, clock, log, sessionTtlMs } = this.options;
    const { oId } = assertion;
    let genuine: boolean;
    try {
      genuine = await platform.verifyAssertion(assertion.fields);
    } catch (error) {
      // The attempt is released: the platform never answered, the user may simply retry.
      log.warn({ err: error }, 'OpenID verification failed to reach the platform');
      throw new SignInError('platform-unavailable', 'The community platform could not be reached to verify the sign-in.');
    }
    if (!genuine) {
      await this.fail(stateHash, claim, 'invalid-assertion', 'the platform answered is_valid:false', clock.now());
      throw new SignInError('invalid-assertion', 'The community platform did not confirm this sign-in.');
    }

    let user: UserRecord;
    try {
      ({ user } = await userSync.sync(oId));
    } catch (error) {
      if (error instanceof NotFoundError) {
        await this.fail(stateHash, claim, 'unknown-user', `no user ${oId} on the platform`, clock.now());
        throw new SignInError('unknown-user', 'The community platform does not know this account.');
      }
      if (error instanceof PlatformUnavailableError || error instanceof PlatformTimeoutError || error instanceof PlatformRejectedError) {
        throw new SignInError('platform-unavailable', 'The community platform could not be reached to load the account.');
      }
      throw error;
    }

    const at = clock.now();
    const sessionId = newSessionId();
    await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'CompleteLogin', claim, userId: user.id, oId, sessionId, at });
    const expires = new Date(Date.parse(at) + sessionTtlMs).toISOString();
    const binding = { sessionId, userId: user.id, oId };
    const [session, client] = await Promise.all([
      handleCommand(store, streams.session(sessionId), sessionDecider, { type: 'StartSession', ...binding, expires, at }),
      handleCommand(store, streams.client(clientId), clientDecider, { type: 'SignInClient', clientId, user: binding, at }),
    ]);
    await runner.waitFor(Math.max(session.position ?? 0, client.position ?? 0));
    return { user, sessionId, clientBound: client.events.length > 0 };
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
