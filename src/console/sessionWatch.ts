// What a console answer held open (a live follow of the event log; in development, the reload
// stream) needs of the session it was opened under: to end with it. The session ends for it at a
// logout made on this node (at once), at expiry (on time), when this node's CONSOLE_ADMINS does not
// list the operator, and at a logout made on another node (read from the store at least every
// SESSION_RECHECK_MS). Each frame is checked before it is sent.
import type { Clock } from '../system/clock.js';
import type { ConsoleSessions, OperatorSession } from './sessions.js';

/** Longest a held answer goes without its session being read again from the store. */
export const SESSION_RECHECK_MS = 30_000;

export interface WatchedSession {
  /** Whether the session still holds now; if not, the watch ends first (its onEnd runs). */
  live(): boolean;
  /** The session is known to have ended (the log says so): ends the watch. */
  ended(): void;
  /** Stops watching, without running onEnd. */
  stop(): void;
}

export class SessionWatch {
  /** Session id → how to end each watch under it. */
  private readonly watches = new Map<string, Set<() => void>>();

  constructor(private readonly deps: { sessions: Pick<ConsoleSessions, 'live' | 'onEnd'>; admins: ReadonlySet<string>; clock: Clock; recheckMs?: number }) {
    deps.sessions.onEnd((sessionId) => {
      for (const end of [...(this.watches.get(sessionId) ?? [])]) end();
    });
  }

  /** Watches `session` until it ends (then `onEnd` runs, once) or until stop(). */
  watch(session: OperatorSession, onEnd: () => void): WatchedSession {
    const { sessions, admins, clock } = this.deps;
    const recheckMs = this.deps.recheckMs ?? SESSION_RECHECK_MS;
    const { sessionId } = session;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const stop = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const held = this.watches.get(sessionId);
      held?.delete(end);
      if (held?.size === 0) this.watches.delete(sessionId);
    };
    const end = () => {
      if (done) return;
      stop();
      onEnd();
    };
    const live = () => {
      if (!done && !(clock.now() < session.expires && admins.has(session.oId))) end();
      return !done;
    };
    const schedule = () => {
      // At expiry exactly, and in between often enough to notice a logout on another node.
      const delay = Math.min(recheckMs, Math.max(0, Date.parse(session.expires) - Date.parse(clock.now())));
      timer = setTimeout(recheck, delay);
      timer.unref();
    };
    const recheck = () => {
      if (!live()) return;
      sessions.live(sessionId).then(
        (current) => {
          if (done) return;
          if (current) schedule();
          else end();
        },
        // Not confirmed is not live: the page reconnects, and its request checks the session.
        () => end(),
      );
    };
    const held = this.watches.get(sessionId) ?? new Set();
    held.add(end);
    this.watches.set(sessionId, held);
    schedule();
    return { live, ended: end, stop };
  }
}
