// Console sessions: started by an operator's sign-in, ended by logout or by time, each in its own
// stream. A request's session is read from the store (operators are few; a read model would only
// add a moment in which a session ended on another node still counts here).
import { fold } from '../domain/decider.js';
import { handleCommand } from '../services/commandHandler.js';
import type { Clock } from '../system/clock.js';
import type { WorkContext } from '../system/workContext.js';
import type { EventStore } from '../store/port.js';
import { consoleSessionDecider, consoleSessionStream, type ConsoleSessionEvent } from './events.js';

export interface OperatorSession {
  sessionId: string;
  oId: string;
  userId: string;
  expires: string;
}

export class ConsoleSessions {
  private readonly endListeners = new Set<(sessionId: string) => void>();

  constructor(private readonly deps: { store: EventStore; clock: Clock; ttlMs: number }) {}

  async start(work: WorkContext, sessionId: string, oId: string, userId: string): Promise<OperatorSession> {
    const { store, clock, ttlMs } = this.deps;
    const at = clock.now();
    const expires = new Date(Date.parse(at) + ttlMs).toISOString();
    await handleCommand(work, store, consoleSessionStream(sessionId), consoleSessionDecider, { type: 'StartConsoleSession', sessionId, oId, userId, expires, at });
    return { sessionId, oId, userId, expires };
  }

  /** The session if it is live now. */
  async live(sessionId: string): Promise<OperatorSession | undefined> {
    const state = fold(consoleSessionDecider, (await this.deps.store.readStream(consoleSessionStream(sessionId))) as unknown as ConsoleSessionEvent[]);
    if (state.status !== 'active' || state.expires <= this.deps.clock.now()) return undefined;
    const { oId, userId, expires } = state;
    return { sessionId, oId, userId, expires };
  }

  async end(work: WorkContext, sessionId: string): Promise<void> {
    // What this node holds open under the session ends first, so that nothing reaches it after
    // the logout is recorded (other nodes learn of it from the log: sessionWatch.ts).
    for (const listener of this.endListeners) listener(sessionId);
    await handleCommand(work, this.deps.store, consoleSessionStream(sessionId), consoleSessionDecider, { type: 'EndConsoleSession', sessionId, at: this.deps.clock.now() });
  }

  /** Calls `listener` with each session this node ends, until the returned stop. */
  onEnd(listener: (sessionId: string) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }
}
