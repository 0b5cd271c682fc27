// The console's two cookies, apart from the players' ones so that neither can stand for the other:
// - `cb_console`: the operator's session, `<sessionId>.<HMAC>`; SameSite=Strict and Path=/console,
//   so no other site's page, and no page of the service outside the console, ever sends it;
// - `cb_console_login`: binds a sign-in attempt to the browser that started it (login CSRF), Lax
//   because the platform's redirect back to the callback is a cross-site top-level GET.
// The CSRF token every console change carries is derived from the session id with the same
// secret: nothing to store, and a page on another origin cannot read it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { newBinding } from '../realtime/browserCookies.js';
import { cookieValue } from '../realtime/sessions.js';

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
  constructor(private readonly options: ConsoleCookieOptions) {}

  /** The session id the request carries with a valid signature, if any. */
  session(cookieHeader: string | undefined): string | undefined {
    const value = cookieValue(cookieHeader, SESSION_COOKIE);
    const dot = value?.lastIndexOf('.') ?? -1;
    if (!value || dot <= 0) return undefined;
    const id = value.slice(0, dot);
    return SESSION_ID.test(id) && same(value.slice(dot + 1), this.sign('console-session', id)) ? id : undefined;
  }

  issueSession(sessionId: string): string {
    return this.cookie(SESSION_COOKIE, `${sessionId}.${this.sign('console-session', sessionId)}`, '/console', this.options.sessionTtlMs, 'Strict');
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
    return this.sign('console-csrf', sessionId);
  }

  isCsrfToken(sessionId: string, given: string | undefined): boolean {
    return given !== undefined && same(given, this.csrfToken(sessionId));
  }

  private sign(purpose: string, value: string): string {
    return createHmac('sha256', this.options.secret).update(`${purpose}:${value}`).digest('base64url');
  }

  private cookie(name: string, value: string, path: string, ttlMs: number, sameSite: 'Strict' | 'Lax'): string {
    const secure = this.options.secure() ? '; Secure' : '';
    return `${name}=${value}; Path=${path}; Max-Age=${Math.floor(ttlMs / 1000)}; HttpOnly; SameSite=${sameSite}${secure}`;
  }
}

function same(given: string, expected: string): boolean {
  const [a, b] = [Buffer.from(given), Buffer.from(expected)];
  return a.length === b.length && timingSafeEqual(a, b);
}
