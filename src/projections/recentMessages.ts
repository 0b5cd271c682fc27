// The messages pushed in the last few minutes, with the users each one reached, so that a
// signed-in browser reconnecting with Last-Event-ID gets what it missed (design.md §4). Fed by
// the projection runner like every read model, so it is filled again from the log at start.
import type { Clock } from '../system/clock.js';
import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';
import type { UsersReadModel } from './users.js';

export interface RecentMessage {
  /** Global position of the MessagePushed event: the SSE frame id. */
  position: number;
  /** When it was pushed (ms since the epoch). */
  at: number;
  /** Internal ids of the users it was meant for (oIds resolved when it was pushed). */
  userIds: ReadonlySet<string>;
  appId: string;
  name: string;
  data: Record<string, unknown>;
}

export interface RecentMessagesOptions {
  users: UsersReadModel;
  clock: Clock;
  /** How long a message can be replayed. */
  retentionMs: number;
  /** Upper bound on messages held, whatever their age (memory guard). */
  maxMessages?: number;
}

export const DEFAULT_MAX_RECENT_MESSAGES = 50_000;

/** Internal user ids a push targets: `userIds` plus the users its `oIds` name, once each. */
export function recipientsOf(data: { oIds: string[]; userIds: string[] }, users: UsersReadModel): Set<string> {
  const recipients = new Set(data.userIds);
  for (const oId of data.oIds) {
    const user = users.byOid(oId);
    if (user) recipients.add(user.id);
  }
  return recipients;
}

export class RecentMessagesReadModel implements Projection {
  readonly name = 'recent-messages';
  readonly handles = ['MessagePushed'] as const;
  /** Oldest first; positions strictly increase. */
  private readonly messages: RecentMessage[] = [];
  private readonly maxMessages: number;
  /** A horizon already passed: time only moves on, so what is older than it is out of the window. */
  private passedHorizon = -Infinity;

  constructor(private readonly options: RecentMessagesOptions) {
    this.maxMessages = options.maxMessages ?? DEFAULT_MAX_RECENT_MESSAGES;
  }

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    if (event.type !== 'MessagePushed') return;
    const at = Date.parse(event.data.at);
    // Catching up on an old log: long past replay (the clock is read again only when it may not be).
    if (at < this.passedHorizon || at < (this.passedHorizon = this.horizon())) return;
    const userIds = recipientsOf(event.data, this.options.users);
    if (userIds.size === 0) return;
    const { appId, name, data } = event.data;
    this.messages.push({ position: recorded.position, at, userIds, appId, name, data });
    this.prune();
  }

  /** Messages for this user after `position`, oldest first, within the retention window. */
  forUserAfter(userId: string, position: number): RecentMessage[] {
    this.prune();
    let lo = 0;
    let hi = this.messages.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.messages[mid]!.position <= position) lo = mid + 1;
      else hi = mid;
    }
    const found: RecentMessage[] = [];
    for (let i = lo; i < this.messages.length; i++) if (this.messages[i]!.userIds.has(userId)) found.push(this.messages[i]!);
    return found;
  }

  get size(): number {
    return this.messages.length;
  }

  private horizon(): number {
    return Date.parse(this.options.clock.now()) - this.options.retentionMs;
  }

  private prune(): void {
    const horizon = this.horizon();
    let drop = 0;
    while (drop < this.messages.length && (this.messages[drop]!.at < horizon || this.messages.length - drop > this.maxMessages)) drop++;
    if (drop > 0) this.messages.splice(0, drop);
  }
}
