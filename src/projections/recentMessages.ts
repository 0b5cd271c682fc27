// The messages pushed in the last few minutes, with the users each one reached, so that a
// signed-in browser reconnecting with Last-Event-ID gets what it missed (docs/architecture.md,
// Realtime). Fed by the projection runner like every read model, so it is filled again from the
// log at start. Bounded three ways, oldest dropped first: by age (judged on the injected clock
// against the time the log recorded), by count, and by bytes (each message's `data` as JSON plus
// its bookkeeping, see messageBytes), since a message may be as large as PUSH_MAX_BYTES.
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
  /** What it counts against the byte bound (messageBytes). */
  bytes: number;
}

export interface RecentMessagesOptions {
  users: UsersReadModel;
  clock: Clock;
  /** How long a message can be replayed. */
  retentionMs: number;
  /** Upper bound on messages held, whatever their age (memory guard). */
  maxMessages?: number;
  /** Upper bound on the bytes of the messages held (REALTIME_REPLAY_MAX_BYTES), whatever their age. */
  maxBytes?: number;
}

export const DEFAULT_MAX_RECENT_MESSAGES = 50_000;

/** REALTIME_REPLAY_MAX_BYTES by default: 64 MiB. */
export const DEFAULT_MAX_RECENT_BYTES = 64 * 1024 * 1024;

/** What a message holds besides its `data` and recipients, as counted: its entry, app id and name. */
export const MESSAGE_OVERHEAD_BYTES = 512;

/** What each recipient adds, as counted: its id in the message's set (a push may name thousands). */
export const RECIPIENT_BYTES = 64;

/**
 * A message's size against the byte bound: `data` as JSON (its length), plus the overheads above.
 * Rough: the parsed `data` may take more memory than its JSON when it is many small values.
 */
export function messageBytes(data: Record<string, unknown>, recipients: number): number {
  return JSON.stringify(data).length + MESSAGE_OVERHEAD_BYTES + RECIPIENT_BYTES * recipients;
}

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
  readonly version = 1;
  readonly handles = ['MessagePushed'] as const;
  /** Oldest first; positions strictly increase. */
  private messages: RecentMessage[] = [];
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  /** Sum of `bytes` over `messages`. */
  private bytes = 0;
  /** A horizon already passed: time only moves on, so what is older than it is out of the window. */
  private passedHorizon = -Infinity;

  constructor(private readonly options: RecentMessagesOptions) {
    this.maxMessages = options.maxMessages ?? DEFAULT_MAX_RECENT_MESSAGES;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_RECENT_BYTES;
  }

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    if (event.type !== 'MessagePushed') return;
    const at = Date.parse(event.data.at);
    // Catching up on an old log: long past replay (the clock is read again only when it may not be).
    if (at < this.passedHorizon) return;
    this.passedHorizon = this.horizon();
    if (at < this.passedHorizon) return;
    const userIds = recipientsOf(event.data, this.options.users);
    if (userIds.size === 0) return;
    const { appId, name, data } = event.data;
    const bytes = messageBytes(data, userIds.size);
    // One that could never fit is not kept, and pushes out nothing.
    if (bytes > this.maxBytes) return;
    this.messages.push({ position: recorded.position, at, userIds, appId, name, data, bytes });
    this.bytes += bytes;
    this.prune();
  }

  snapshotState() {
    const { messages, bytes, passedHorizon, maxMessages, maxBytes } = this;
    return { messages, bytes, passedHorizon, retentionMs: this.options.retentionMs, maxMessages, maxBytes };
  }

  /**
   * A longer window or larger bounds would have kept messages the snapshot has not: rebuilt then.
   * (Rebuilt alone, it reads the users as they are now, not as they were at each push: a push
   * to an oId that registered later could reach that user, within the window.)
   */
  restoreState(state: ReturnType<RecentMessagesReadModel['snapshotState']>): boolean {
    if (state.retentionMs !== this.options.retentionMs || state.maxMessages !== this.maxMessages || state.maxBytes !== this.maxBytes) return false;
    ({ messages: this.messages, bytes: this.bytes, passedHorizon: this.passedHorizon } = state);
    return true;
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

  /** The bytes held, as counted against the byte bound. */
  get heldBytes(): number {
    return this.bytes;
  }

  private horizon(): number {
    return Date.parse(this.options.clock.now()) - this.options.retentionMs;
  }

  private prune(): void {
    const horizon = this.horizon();
    let drop = 0;
    while (drop < this.messages.length && (this.messages[drop]!.at < horizon || this.messages.length - drop > this.maxMessages || this.bytes > this.maxBytes)) {
      this.bytes -= this.messages[drop++]!.bytes;
    }
    if (drop > 0) this.messages.splice(0, drop);
  }
}
