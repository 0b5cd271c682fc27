// What the console shows that the service's read models do not keep: users to search by name,
// each user's sessions, when each key was last used, the nodes seen in the log, and outcomes of
// platform operations per minute. Folded by the service's runner, after its read models, only
// where the console is on.
import type { RecordedEvent } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import { asDomain } from '../projections/recorded.js';
import type { Projection } from '../projections/runner.js';

export interface IndexedUser {
  oId: string;
  userId: string;
  name: string;
  nickname: string;
  registered: string;
}

export interface UserSession {
  /** Not the id: it is a bearer secret. The log position of its start tells sessions apart. */
  position: number;
  started: string;
  expires: string;
  ended?: string;
}

export type OutcomeKind = 'applied' | 'rejected' | 'failed' | 'unknown' | 'resolved';
export const OUTCOME_KINDS: readonly OutcomeKind[] = ['applied', 'rejected', 'failed', 'unknown', 'resolved'];
const OUTCOME_OF: Record<string, OutcomeKind> = {
  OperationApplied: 'applied',
  OperationRejected: 'rejected',
  OperationFailed: 'failed',
  OperationOutcomeUnknown: 'unknown',
  OperationResolved: 'resolved',
};

/** How far back the per-minute counts go. */
export const WINDOW_MINUTES = 60;
const MINUTE_MS = 60_000;

export class ConsoleIndex implements Projection {
  readonly name = 'console';
  readonly version = 1;
  readonly handles = [
    'UserRegistered',
    'UserProfileChanged',
    'SessionStarted',
    'SessionEnded',
    'VipGranted',
    'VipRenewed',
    'PointsEditRequested',
    'MedalGiveRequested',
    'MedalRemoveRequested',
    'ItemsEditRequested',
    'MessagePushed',
    'ClientConnected',
    'IdempotentRequestStarted',
    'OperationApplied',
    'OperationRejected',
    'OperationFailed',
    'OperationOutcomeUnknown',
    'OperationResolved',
  ] as const;
  private users = new Map<string, IndexedUser>();
  /** oIds in the order their users registered (users are never removed). */
  private registered: string[] = [];
  private sessionsByOid = new Map<string, UserSession[]>();
  private sessionById = new Map<string, UserSession>();
  private keyLastUsed = new Map<string, string>();
  private nodeLastSeen = new Map<string, string>();
  /** Minute (epoch ms) → outcome → count. */
  private perMinute = new Map<number, Record<OutcomeKind, number>>();

  constructor(private readonly clock: Clock) {}

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    switch (event.type) {
      case 'UserRegistered': {
        const { oId, userId, name, nickname, at } = event.data;
        if (!this.users.has(oId)) this.registered.push(oId);
        this.users.set(oId, { oId, userId, name, nickname, registered: at });
        return;
      }
      case 'UserProfileChanged': {
        const user = this.users.get(event.data.oId);
        if (user)
          Object.assign(user, {
            ...(event.data.changes.name !== undefined && { name: event.data.changes.name }),
            ...(event.data.changes.nickname !== undefined && { nickname: event.data.changes.nickname }),
          });
        return;
      }
      case 'SessionStarted': {
        const session: UserSession = { position: recorded.position, started: event.data.at, expires: event.data.expires };
        this.sessionById.set(event.data.sessionId, session);
        this.sessionsByOid.set(event.data.oId, [...(this.sessionsByOid.get(event.data.oId) ?? []), session]);
        return;
      }
      case 'SessionEnded': {
        const session = this.sessionById.get(event.data.sessionId);
        if (session) session.ended = event.data.at;
        this.sessionById.delete(event.data.sessionId);
        return;
      }
      case 'ClientConnected':
      case 'IdempotentRequestStarted':
        if (event.data.node !== undefined) this.nodeLastSeen.set(event.data.node, event.data.at);
        return;
      default:
        break;
    }
    const data = event.data as { keyId?: string; node?: string; at: string };
    if (data.keyId !== undefined) this.keyLastUsed.set(data.keyId, data.at);
    if (data.node !== undefined) this.nodeLastSeen.set(data.node, data.at);
    const outcome = OUTCOME_OF[event.type];
    if (outcome) this.countOutcome(outcome, data.at);
  }

  /** The session maps share their sessions (one serialisation keeps them shared). */
  snapshotState() {
    const { users, registered, sessionsByOid, sessionById, keyLastUsed, nodeLastSeen, perMinute } = this;
    return { users, registered, sessionsByOid, sessionById, keyLastUsed, nodeLastSeen, perMinute };
  }

  restoreState(state: ReturnType<ConsoleIndex['snapshotState']>): boolean {
    ({ users: this.users, registered: this.registered, sessionsByOid: this.sessionsByOid, sessionById: this.sessionById } = state);
    ({ keyLastUsed: this.keyLastUsed, nodeLastSeen: this.nodeLastSeen, perMinute: this.perMinute } = state);
    return true;
  }

  /** Users whose oId starts with, or whose name or nickname contains, the text (any case). */
  searchUsers(text: string, limit: number): IndexedUser[] {
    const wanted = text.trim().toLowerCase();
    const found: IndexedUser[] = [];
    for (const user of this.users.values()) {
      if (user.oId.startsWith(wanted) || user.name.toLowerCase().includes(wanted) || user.nickname.toLowerCase().includes(wanted)) found.push(user);
      if (found.length >= limit) break;
    }
    return found;
  }

  /** The users who registered last, newest first. */
  newestUsers(limit: number): IndexedUser[] {
    return this.registered
      .slice(-limit)
      .reverse()
      .map((oId) => this.users.get(oId)!);
  }

  user(oId: string): IndexedUser | undefined {
    return this.users.get(oId);
  }

  sessionsOf(oId: string): readonly UserSession[] {
    return this.sessionsByOid.get(oId) ?? [];
  }

  lastUsed(keyId: string): string | undefined {
    return this.keyLastUsed.get(keyId);
  }

  nodes(): Array<{ node: string; lastSeen: string }> {
    return [...this.nodeLastSeen].map(([node, lastSeen]) => ({ node, lastSeen })).sort((a, b) => b.lastSeen.localeCompare(a.lastSeen));
  }

  /** Outcomes per minute over the last WINDOW_MINUTES, oldest first, empty minutes included. */
  outcomesPerMinute(): Array<{ minute: string } & Record<OutcomeKind, number>> {
    const now = Math.floor(Date.parse(this.clock.now()) / MINUTE_MS) * MINUTE_MS;
    const from = now - (WINDOW_MINUTES - 1) * MINUTE_MS;
    for (const minute of this.perMinute.keys()) if (minute < from) this.perMinute.delete(minute);
    const minutes = [];
    for (let minute = from; minute <= now; minute += MINUTE_MS) {
      minutes.push({ minute: new Date(minute).toISOString(), ...(this.perMinute.get(minute) ?? emptyCounts()) });
    }
    return minutes;
  }

  private countOutcome(kind: OutcomeKind, at: string): void {
    const minute = Math.floor(Date.parse(at) / MINUTE_MS) * MINUTE_MS;
    // Catching up on an old log: long past the window.
    if (minute < Date.parse(this.clock.now()) - WINDOW_MINUTES * MINUTE_MS) return;
    const counts = this.perMinute.get(minute) ?? emptyCounts();
    counts[kind]++;
    this.perMinute.set(minute, counts);
  }
}

const emptyCounts = (): Record<OutcomeKind, number> => ({ applied: 0, rejected: 0, failed: 0, unknown: 0, resolved: 0 });
