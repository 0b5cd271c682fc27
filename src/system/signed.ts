// One way to sign what the service hands a browser and takes back (session cookies, the console's
// CSRF token, sign-in states): an HMAC-SHA256 under the session secret, with a purpose in what is
// signed, so that a value signed for one purpose never passes for another; compared in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class Signer {
  constructor(private readonly secret: Buffer) {}

  sign(purpose: string, value: string): string {
    return createHmac('sha256', this.secret).update(`${purpose}:${value}`).digest('base64url');
  }

  verify(purpose: string, value: string, signature: string): boolean {
    const [given, expected] = [Buffer.from(signature), Buffer.from(this.sign(purpose, value))];
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** `<value>.<signature>`. */
  seal(purpose: string, value: string): string {
    return `${value}.${this.sign(purpose, value)}`;
  }

  /** The value of `<value>.<signature>`, when it was sealed for this purpose and has this form. */
  open(purpose: string, sealed: string, form: RegExp): string | undefined {
    const dot = sealed.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const value = sealed.slice(0, dot);
    return form.test(value) && this.verify(purpose, value, sealed.slice(dot + 1)) ? value : undefined;
  }
}

/** A Set-Cookie value for an HttpOnly cookie. */
export function setCookie(name: string, value: string, options: { path: string; maxAgeSeconds?: number; sameSite: 'Strict' | 'Lax' | 'None'; secure: boolean }): string {
  const maxAge = options.maxAgeSeconds === undefined ? '' : `; Max-Age=${options.maxAgeSeconds}`;
  return `${name}=${value}; Path=${options.path}${maxAge}; HttpOnly; SameSite=${options.sameSite}${options.secure ? '; Secure' : ''}`;
}
