// Operators sign in through the platform's OpenID like players do, with the same attempt and
// every check of it (src/realtime/openIdAttempts.ts); what differs is what a verified account
// gets: a console session, and only when CONSOLE_ADMINS lists it.
import { SignInError } from '../domain/login.js';
import type { OpenIdAttempts, Query } from '../realtime/openIdAttempts.js';
import { newSessionId } from '../realtime/sessions.js';
import type { ConsoleSessions, OperatorSession } from './sessions.js';
import type { WorkContext } from '../system/workContext.js';

/**
 * Stands where a player's attempt names its realtime client: no client id has this shape, so
 * neither sign-in accepts the other's attempts.
 */
const CONSOLE_ATTEMPT = 'console';

export class ConsoleSignIn {
  constructor(private readonly deps: { attempts: OpenIdAttempts; sessions: ConsoleSessions; admins: ReadonlySet<string>; publicUrl: () => string }) {}

  callbackUrl(): string {
    return `${this.deps.publicUrl()}/console/callback`;
  }

  /** The platform's sign-in page for a new attempt bound to this login binding. */
  start(loginBinding: string): Promise<string> {
    return this.deps.attempts.start(CONSOLE_ATTEMPT, this.callbackUrl(), loginBinding);
  }

  /** Throws SignInError on any refusal; `not-operator` for an account CONSOLE_ADMINS does not list. */
  complete(work: WorkContext, query: Query, loginBinding: string | undefined): Promise<OperatorSession> {
    const { attempts, sessions, admins } = this.deps;
    return attempts.complete(
      work,
      query,
      loginBinding,
      (clientId) => clientId === CONSOLE_ATTEMPT,
      async (attempt) => {
        if (!admins.has(attempt.oId)) {
          await attempt.fail('not-operator', `${attempt.oId} is not in CONSOLE_ADMINS`);
          throw new SignInError('not-operator', 'This account may not use the console.');
        }
        const user = await attempts.userOf(attempt);
        const sessionId = newSessionId();
        await attempt.succeed(user.id, sessionId);
        return sessions.start(work, sessionId, attempt.oId, user.id);
      },
    );
  }
}
