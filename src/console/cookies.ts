// The console's two cookies, apart from the players' ones so that neither can stand for the other:
// - `cb_console`: the operator's session, `<sessionId>.<HMAC>`; SameSite=Strict and Path=/console,
//   so no other site's page, and no page of the service outside the console, ever sends it;
// - `cb_console_login`: binds a sign-in attempt to the browser that started it (login CSRF), Lax
//   because the platform's redirect back to the callback is a cross-site top-level GET.
// The CSRF token every console change carries is derived from the session id with the same
// secret: nothing to store, and a page on another origin cannot read it.
import { newBinding } from '../realtime/browserCookies.js';
import { cookieValue } from '../realtime/sessions.js';
import { setCookie, Signer } from '../system/signed.js';

export const SESSION_COOKIE = 'cb_console';
export const LOGIN_COOKIE = 'cb_console_login';

const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;
const BINDING = /^[A-Za-z0-9_-]{32}$/;

export interface ConsoleCookieOptions {
  secret: Buffer;
  sessionTtlMs: number;
  loginTtlMs: number;
  /** When the service is reached over https. */
  secure: () => boolean;
}

export class ConsoleCookies {
  private readonly signer: Signer;

  constructor(private readonly options: ConsoleCookieOptions) {
    this.signer = new Signer(options.secret);
  }

  /** The session id the request carries with a valid signature, if any. */
  session(cookieHeader: string | undefined): string | undefined {
    const value = cookieValue(cookieHeader, SESSION_COOKIE);
    return value ? this.signer.open('console-session', value, SESSION_ID) : undefined;
  }

  issueSession(sessionId: string): string {
    return this.cookie(SESSION_COOKIE, this.signer.seal('console-session', sessionId), '/console', this.options.sessionTtlMs, 'Strict');
  }

  clearSession(): string {
    return this.cookie(SESSION_COOKIE, '', '/console', 0, 'Strict');
  }

  /** The browser's login binding value, or a new one (kept across attempts in one browser). */
  loginBinding(cookieHeader: string | undefined): string | undefined {
    const value = cookieValue(cookieHeader, LOGIN_COOKIE);
    return value !== undefined && BINDING.test(value) ? value : undefined;
  }

  newLoginBinding(): string {
    return newBinding();
  }

  issueLoginBinding(value: string): string {
    return this.cookie(LOGIN_COOKIE, value, '/console/', this.options.loginTtlMs, 'Lax');
  }

  /** The token the session's pages send with every change. */
  csrfToken(sessionId: string): string {
    return this.signer.sign('console-csrf', sessionId);
  }

  isCsrfToken(sessionId: string, given: string | undefined): boolean {
    return given !== undefined && this.signer.verify('console-csrf', sessionId, given);
  }

  private cookie(name: string, value: string, path: string, ttlMs: number, sameSite: 'Strict' | 'Lax'): string {
    return setCookie(name, value, { path, maxAgeSeconds: Math.floor(ttlMs / 1000), sameSite, secure: this.options.secure() });
  }
}
