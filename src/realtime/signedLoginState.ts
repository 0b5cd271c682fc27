// The state of a sign-in attempt, carried by the browser rather than recorded: a login page
// writes nothing durable for a visitor who has proved nothing. The state holds what the callback
// must check (the client it signs in, the callback it returns to, when it expires, the browser
// it was issued to) and an HMAC of it under the session secret, which every node shares, so the
// node that receives the callback verifies a state another node issued. Single use is the log's
// job: the attempt's end is appended to a stream named after the state that must not exist yet.
import { hash, randomBytes } from 'node:crypto';
import * as v from 'valibot';
import { Signer } from '../system/signed.js';

/** A state's content as issued: base64url JSON (a dot and its base64url HMAC-SHA256 follow). */
const CONTENT = /^[A-Za-z0-9_-]{16,1400}$/;
const PURPOSE = 'login-state';

const Payload = v.object({
  /** The client (or the caller's marker) the attempt signs in. */
  c: v.pipe(v.string(), v.maxLength(200)),
  /** The callback URL the platform returns to (without the state). */
  u: v.pipe(v.string(), v.maxLength(500)),
  /** Expiry, ms since the epoch, on the log's clock. */
  e: v.number(),
  /** SHA-256 of the login cookie of the browser it was issued to. */
  b: v.pipe(v.string(), v.length(43)),
  /** Issued to the browser that holds the connection (it may sign in a client already bound). */
  h: v.boolean(),
  /** 128 random bits: two attempts never share a state. */
  n: v.pipe(v.string(), v.length(22)),
});

export interface LoginStateContent {
  clientId: string;
  callbackUrl: string;
  expiresMs: number;
  browser: string;
  holdsConnection: boolean;
}

export const hashState = (state: string) => hash('sha256', state, 'base64url');

export class SignedLoginStates {
  private readonly signer: Signer;

  constructor(secret: Buffer) {
    this.signer = new Signer(secret);
  }

  issue(content: LoginStateContent): string {
    const payload: v.InferOutput<typeof Payload> = {
      c: content.clientId,
      u: content.callbackUrl,
      e: content.expiresMs,
      b: content.browser,
      h: content.holdsConnection,
      n: randomBytes(16).toString('base64url'),
    };
    return this.signer.seal(PURPOSE, Buffer.from(JSON.stringify(payload)).toString('base64url'));
  }

  /** What a state says, when this service issued it (whatever its age); undefined otherwise. */
  read(state: string): LoginStateContent | undefined {
    if (state.length > 1500) return undefined;
    const body = this.signer.open(PURPOSE, state, CONTENT);
    if (body === undefined) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const parsed = v.safeParse(Payload, json);
    if (!parsed.success) return undefined;
    const { c, u, e, b, h } = parsed.output;
    return { clientId: c, callbackUrl: u, expiresMs: e, browser: b, holdsConnection: h };
  }
}
