// Browser sessions (docs/architecture.md, "Realtime"): the cookie carries `<sessionId>.<HMAC-SHA256(secret, id)>`;
// the session itself lives in the log (`session-<id>`), so a logout on one node ends it on all.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionBinding } from '../domain/client.js';
import { fold } from '../domain/decider.js';
import { streams, type SessionEvent, type UserEvent } from '../domain/events.js';
import { liveSession, sessionDecider } from '../domain/session.js';
import { userDecider } from '../domain/user.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { SessionsReadModel } from '../projections/sessions.js';
import type { UserRecord, UsersReadModel } from '../projections/users.js';
import { handleCommand } from '../services/commandHandler.js';
import type { WorkContext } from '../system/workContext.js';
import type { Clock } from '../system/clock.js';
import { setCookie, Signer } from '../system/signed.js';
import type { EventStore } from '../store/port.js';

export const SESSION_COOKIE = 'cb_session';

/** 24 CSPRNG bytes in base64url. */
export function newSessionId(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * SESSION_SECRET, or a secret generated once into DATA_DIR/session-secret (mode 0600) and read
 * back on every later start. Several nodes must share one secret: set SESSION_SECRET for them.
 */
export function loadSessionSecret(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = join(dataDir, 'session-secret');
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return Buffer.from(secret, 'utf8');
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
  }
}

export interface CookieOptions {
  secret: Buffer;
  ttlMs: number;
  /** Secure attribute: when the service is reached over https. */
  secure: () => boolean;
}

const SESSION_ID = /^[A-Za-z0-9_-]{16,64}$/;

/** Signs, reads and writes the session cookie. */
export class SessionCookies {
  private readonly signer: Signer;

  constructor(private readonly options: CookieOptions) {
    this.signer = new Signer(options.secret);
  }

  /** The session id the request's Cookie header carries with a valid signature, if any. */
  read(cookieHeader: string | undefined): string | undefined {
    const value = cookieValue(cookieHeader, SESSION_COOKIE);
    return value ? this.signer.open('session', value, SESSION_ID) : undefined;
  }

  /** Set-Cookie value that stores this session. */
  issue(sessionId: string): string {
    return this.serialize(this.signer.seal('session', sessionId), Math.floor(this.options.ttlMs / 1000));
  }

  /** Set-Cookie value that removes the cookie. */
  clear(): string {
    return this.serialize('', 0);
  }

  private serialize(value: string, maxAgeSeconds: number): string {
    return setCookie(SESSION_COOKIE, value, { path: '/', maxAgeSeconds, sameSite: 'Lax', secure: this.options.secure() });
  }
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface ActiveSession {
  binding: SessionBinding;
  user: UserRecord;
}

/**
 * Finds the live session behind a session id. The read model answers almost always; a session
 * started on another node a moment ago may not have reached it yet, so the store is asked then.
 */
export class Sessions {
  constructor(private readonly deps: { store: EventStore; runner: ProjectionRunner; sessions: SessionsReadModel; users: UsersReadModel; clock: Clock }) {}

  /** Logout: ends the session everywhere (its connections on every node close). */
  async end(work: WorkContext, sessionId: string): Promise<void> {
    const { store, runner, clock } = this.deps;
    const { position } = await handleCommand(work, store, streams.session(sessionId), sessionDecider, { type: 'EndSession', sessionId, at: clock.now() });
    if (position !== undefined) await runner.waitFor(position);
  }

  async resolve(sessionId: string | undefined): Promise<ActiveSession | undefined> {
    if (!sessionId) return undefined;
    const { store, sessions, users, clock } = this.deps;
    const now = clock.now();
    let record = sessions.get(sessionId);
    if (!record) {
      const state = fold(sessionDecider, (await store.readStream(streams.session(sessionId))) as unknown as SessionEvent[]);
      record = liveSession(state, now);
    }
    if (!record || record.expires <= now) return undefined;
    const user = users.byOid(record.oId) ?? (await userFromStore(store, record.oId));
    if (!user) return undefined;
    return { binding: { sessionId, userId: record.userId, oId: record.oId }, user };
  }
}

/** A user folded from its stream, for the moment before this node's read model has it. */
export async function userFromStore(store: EventStore, oId: string): Promise<UserRecord | undefined> {
  const state = fold(userDecider, (await store.readStream(streams.user(oId))) as unknown as UserEvent[]);
  if (!state.exists) return undefined;
  const { userId, name, nickname, avatar, created, updated } = state;
  return { id: userId, oId, name, nickname, avatar, created, updated };
}
