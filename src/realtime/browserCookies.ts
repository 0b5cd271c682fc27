// The two cookies that tie a sign-in to a browser (docs/decisions.md "Realtime and sign-in"):
// - `cb_client`, set by the realtime stream: the login page opened by the browser that holds the
//   connection proceeds at once; any other browser is asked to confirm first;
// - `cb_login`, set by the login page next to the state: the callback refuses the state in a
//   browser without it, so a prepared callback URL signs nobody in (login CSRF).
// Each holds a random value; the log holds only its SHA-256, next to the connection or the state.
import { hash } from 'node:crypto';
import { secureRandomBytes } from '../system/ids.js';
import { cookieValue } from './sessions.js';

export const CLIENT_COOKIE = 'cb_client';
export const LOGIN_COOKIE = 'cb_login';

const VALUE = /^[A-Za-z0-9_-]{32}$/;

/** What the log keeps of a cookie value. */
export const hashBinding = (value: string) => hash('sha256', value, 'base64url');

export interface BrowserCookieOptions {
  /** When the service is reached over https: Secure, and SameSite=None for the client binding. */
  secure: () => boolean;
  /** Path of the login page and the callback (`/<COMMUNITY_NAME>/`). */
  loginPath: string;
  loginTtlMs: number;
}

export class BrowserCookies {
  constructor(private readonly options: BrowserCookieOptions) {}

  /** The request's client binding value, if it carries a well-formed one. */
  clientBinding(cookieHeader: string | undefined): string | undefined {
    return wellFormed(cookieValue(cookieHeader, CLIENT_COOKIE));
  }

  /** The request's login binding value, if it carries a well-formed one. */
  loginBinding(cookieHeader: string | undefined): string | undefined {
    return wellFormed(cookieValue(cookieHeader, LOGIN_COOKIE));
  }

  /**
   * Set-Cookie for the client binding: the stream is usually opened by a page on another site,
   * which needs SameSite=None (and so Secure). On plain http browsers refuse that, so Lax there:
   * only a same-site page's stream gets the cookie, other pages lead to the confirmation.
   * A browser-session cookie: it only has to outlive the connections it was set with.
   */
  issueClientBinding(value: string): string {
    return `${CLIENT_COOKIE}=${value}; Path=/; HttpOnly; ${this.options.secure() ? 'SameSite=None; Secure' : 'SameSite=Lax'}`;
  }

  /** Set-Cookie for the login binding: only the login page and the callback see it, for as long as a state lives. */
  issueLoginBinding(value: string): string {
    const maxAge = Math.ceil(this.options.loginTtlMs / 1000);
    return `${LOGIN_COOKIE}=${value}; Path=${this.options.loginPath}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${this.options.secure() ? '; Secure' : ''}`;
  }
}

/** 24 CSPRNG bytes in base64url: 32 characters (every new stream makes one, hence the pool). */
export const newBinding = () => secureRandomBytes(24).toString('base64url');

const wellFormed = (value: string | undefined) => (value !== undefined && VALUE.test(value) ? value : undefined);
