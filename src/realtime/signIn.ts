// Sign-in through the platform's OpenID 2.0 provider (docs/architecture.md, "Realtime"). The login page starts an attempt (openIdAttempts.ts) bound to a connected client
// and to the browser; once the callback's assertion is checked and verified, this syncs the user,
// starts a session and appends ClientSignedIn — which reaches the connection through the store,
// on any node.
import { ClientBoundError, clientDecider } from '../domain/client.js';
import { streams } from '../domain/events.js';
import { SignInError } from '../domain/login.js';
import { sessionDecider } from '../domain/session.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { UserRecord } from '../projections/users.js';
import { handleCommand } from '../services/commandHandler.js';
import type { WorkContext } from '../system/workContext.js';
import type { Clock } from '../system/clock.js';
import type { EventStore } from '../store/port.js';
import { hashBinding } from './browserCookies.js';
import { isClientIdShape, type Clients } from './clients.js';
import type { OpenIdAttempts, Query } from './openIdAttempts.js';
import { newSessionId } from './sessions.js';

export interface SignInOptions {
  store: EventStore;
  runner: ProjectionRunner;
  attempts: OpenIdAttempts;
  clients: Clients;
  clock: Clock;
  /** External base URL of the service (PUBLIC_URL, or its own address once listening). */
  publicUrl: () => string;
  communityName: string;
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

export class SignIn {
  constructor(private readonly options: SignInOptions) {}

  /** The URL of the callback this service serves (return_to without its state). */
  callbackUrl(): string {
    return `${this.options.publicUrl()}/${this.options.communityName}/callback`;
  }

  /**
   * Login page: checks the client, issues a fresh signed state bound to the browser's login
   * cookie, and answers the platform URL — and whether this browser is the one holding the
   * connection (else the page asks the user to confirm, naming the site that opened it).
   */
  async start(clientId: string | undefined, browser: { login: string; client: string | undefined }): Promise<LoginStart> {
    if (!clientId) throw new SignInError('missing-client-id', 'The client_id parameter is missing.');
    const opener = await this.options.clients.opener(clientId);
    if (!opener) throw new SignInError('unknown-client', 'No open connection has this client_id.');
    const sameBrowser = browser.client !== undefined && opener.browser === hashBinding(browser.client);
    // Anyone holding a client id could otherwise sign a signed-in connection over to themselves.
    if (opener.bound && !sameBrowser) throw new SignInError('bound-client', 'This connection is signed in already.');
    return {
      platformUrl: await this.options.attempts.start(clientId, this.callbackUrl(), browser.login, sameBrowser),
      sameBrowser,
      ...(opener.origin !== undefined && { origin: opener.origin }),
    };
  }

  /**
   * Callback: every check of the assertion, then the sign-in. `loginBinding` is the browser's
   * login cookie. Throws SignInError on any refusal.
   */
  complete(work: WorkContext, query: Query, loginBinding: string | undefined): Promise<SignedIn> {
    const { attempts } = this.options;
    return attempts.complete(work, query, loginBinding, isClientIdShape, async (attempt) => {
      const user = await attempts.userOf(attempt);
      const { store, runner, clock, sessionTtlMs } = this.options;
      const { oId, clientId } = attempt;
      const sessionId = newSessionId();
      await attempt.succeed(user.id, sessionId);
      const at = clock.now();
      const expires = new Date(Date.parse(at) + sessionTtlMs).toISOString();
      const binding = { sessionId, userId: user.id, oId };
      // The connection first: one signed in meanwhile by someone else is not taken over.
      const client = await handleCommand(work, store, streams.client(clientId), clientDecider, {
        type: 'SignInClient',
        clientId,
        user: binding,
        rebind: attempt.holdsConnection,
        at,
      }).catch((error: unknown) => {
        if (error instanceof ClientBoundError) throw new SignInError('bound-client', 'This connection is signed in already.');
        throw error;
      });
      const session = await handleCommand(work, store, streams.session(sessionId), sessionDecider, { type: 'StartSession', ...binding, expires, at });
      await runner.waitFor(Math.max(session.position ?? 0, client.position ?? 0));
      return { user, sessionId, clientBound: client.events.length > 0 };
    });
  }
}
