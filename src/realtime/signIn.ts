// Sign-in through the platform's OpenID 2.0 provider (community-platform.md "Sign-in",
// design.md §4). The login page starts an attempt bound to a connected client; the callback
// checks the assertion, consumes the attempt exactly once, syncs the user, starts a session
// and appends ClientSignedIn — which reaches the connection through the store, on any node.
import { createHash, randomBytes } from 'node:crypto';
import { clientDecider } from '../domain/client.js';
import { fold } from '../domain/decider.js';
import { NotFoundError, PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../domain/errors.js';
import { streams, type LoginEvent, type LoginFailureReason } from '../domain/events.js';
import { assertUsable, loginDecider, SignInError } from '../domain/login.js';
import { sessionDecider } from '../domain/session.js';
import type { CommunityPlatform } from '../community/port.js';
import type { Logger } from '../log.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { UserRecord } from '../projections/users.js';
import { handleCommand } from '../services/commandHandler.js';
import type { Clock } from '../services/runtime.js';
import type { UserSync } from '../services/userSync.js';
import type { EventStore } from '../store/port.js';
import type { Clients } from './clients.js';
import { newSessionId } from './sessions.js';

const STATE = /^[A-Za-z0-9_-]{43}$/;

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

  /** Login page: checks the client, records a fresh single-use state, answers the platform URL. */
  async start(clientId: string | undefined): Promise<string> {
    const { store, platform, clock, publicUrl, stateTtlMs } = this.options;
    if (!clientId) throw new SignInError('missing-client-id', 'The client_id parameter is missing.');
    // The store, not a read model: the connection may be held by a node whose events this node
    // has not applied yet.
    if (!(await this.options.clients.isConnected(clientId))) {
      throw new SignInError('unknown-client', 'No open connection has this client_id.');
    }
    const state = randomBytes(32).toString('base64url'); // 256 bits
    const stateHash = hashState(state);
    const callbackUrl = this.callbackUrl();
    const at = clock.now();
    const expires = new Date(Date.parse(at) + stateTtlMs).toISOString();
    await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'StartLogin', stateHash, clientId, callbackUrl, expires, at });
    return platform.openIdLoginUrl({ returnTo: returnTo(callbackUrl, state), realm: new URL(publicUrl()).origin });
  }

  /** Callback: every check of the assertion, then the sign-in. Throws SignInError on any refusal. */
  async complete(query: Query): Promise<SignedIn> {
    const { store, runner, platform, userSync, clock, log, sessionTtlMs } = this.options;
    const state = single(query.state);
    if (!state || !STATE.test(state)) throw new SignInError('unknown-state', 'This sign-in link is not known.');
    const stateHash = hashState(state);
    const login = fold(loginDecider, (await store.readStream(streams.login(stateHash))) as unknown as LoginEvent[]);
    const now = clock.now();
    try {
      assertUsable(login, now);
    } catch (error) {
      if (error instanceof SignInError && error.reason === 'expired') await this.fail(stateHash, 'expired', 'state expired', now);
      throw error;
    }
    if (query.error !== undefined) {
      await this.fail(stateHash, 'cancelled', `platform error: ${String(single(query.error) ?? '')}`.slice(0, 200), now);
      throw new SignInError('cancelled', 'Sign-in was cancelled on the community platform.');
    }

    const assertion = this.readAssertion(query, returnTo(login.callbackUrl, state));
    if (typeof assertion === 'string') {
      await this.fail(stateHash, 'invalid-assertion', assertion, now);
      throw new SignInError('invalid-assertion', 'The community platform’s answer could not be verified.');
    }
    const { params, oId } = assertion;

    let genuine: boolean;
    try {
      genuine = await platform.verifyAssertion(params);
    } catch (error) {
      // The attempt stays open: the platform never answered, the user may simply retry.
      log.warn({ err: error }, 'OpenID verification failed to reach the platform');
      throw new SignInError('platform-unavailable', 'The community platform could not be reached to verify the sign-in.');
    }
    if (!genuine) {
      await this.fail(stateHash, 'invalid-assertion', 'the platform answered is_valid:false', now);
      throw new SignInError('invalid-assertion', 'The community platform did not confirm this sign-in.');
    }

    let user: UserRecord;
    try {
      ({ user } = await userSync.sync(oId));
    } catch (error) {
      if (error instanceof NotFoundError) {
        await this.fail(stateHash, 'unknown-user', `no user ${oId} on the platform`, now);
        throw new SignInError('unknown-user', 'The community platform does not know this account.');
      }
      if (error instanceof PlatformUnavailableError || error instanceof PlatformTimeoutError || error instanceof PlatformRejectedError) {
        throw new SignInError('platform-unavailable', 'The community platform could not be reached to load the account.');
      }
      throw error;
    }

    // The single use: of two callbacks with one state, only one append succeeds.
    const at = clock.now();
    const sessionId = newSessionId();
    await handleCommand(store, streams.login(stateHash), loginDecider, { type: 'CompleteLogin', userId: user.id, oId, sessionId, at });
    const expires = new Date(Date.parse(at) + sessionTtlMs).toISOString();
    const binding = { sessionId, userId: user.id, oId };
    const [session, client] = await Promise.all([
      handleCommand(store, streams.session(sessionId), sessionDecider, { type: 'StartSession', ...binding, expires, at }),
      handleCommand(store, streams.client(login.clientId), clientDecider, { type: 'SignInClient', clientId: login.clientId, user: binding, at }),
    ]);
    await runner.waitFor(Math.max(session.position ?? 0, client.position ?? 0));
    return { user, sessionId, clientBound: client.events.length > 0 };
  }

  /** The `openid.*` parameters and the oId they claim, or what is wrong with them (our own checks). */
  private readAssertion(query: Query, issuedReturnTo: string): { params: Record<string, string>; oId: string } | string {
    const { platform } = this.options;
    const params = openIdParams(query);
    if (!params) return 'an openid parameter is repeated';
    const identity = params['openid.identity'];
    if (params['openid.mode'] !== 'id_res') return `openid.mode is ${params['openid.mode'] ?? 'missing'}, not id_res`;
    if (params['openid.op_endpoint'] !== platform.openIdEndpoint) return 'openid.op_endpoint is not the platform';
    if (!identity || identity !== params['openid.claimed_id']) return 'openid.identity and openid.claimed_id differ';
    const oId = platform.identityPattern.exec(identity)?.[1];
    if (!oId) return 'openid.identity is not an identity of the platform';
    if (params['openid.return_to'] !== issuedReturnTo) return 'openid.return_to is not the one issued';
    return { params, oId };
  }

  /** Closes the attempt as failed; a concurrent callback that closed it first wins, silently. */
  private async fail(stateHash: string, reason: LoginFailureReason, detail: string, at: string): Promise<void> {
    try {
      await handleCommand(this.options.store, streams.login(stateHash), loginDecider, { type: 'FailLogin', reason, detail, at });
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

/** Every `openid.*` query parameter, or undefined when one is given twice. */
function openIdParams(query: Query): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!name.startsWith('openid.')) continue;
    if (typeof value !== 'string') return undefined;
    params[name] = value;
  }
  return params;
}

