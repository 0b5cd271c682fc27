import type { Actor, VipQuality } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';

/** One VIP grant or renewal, as an auditor reads it. Instants are ISO-8601 UTC. */
export interface VipHistoryEntry extends Actor {
  /** Global log position of the event: the entry's place in history (audit cursors). */
  position: number;
  action: 'granted' | 'renewed';
  recordId: string;
  userId: string;
  quality: VipQuality;
  expired: string;
  /** The expiry the renewal replaced; absent for a grant. */
  previousExpired?: string;
  at: string;
}

/** Every VIP grant and renewal by internal user id, oldest first. */
export class VipHistoryReadModel implements Projection {
  readonly name = 'vip-history';
  readonly handles = ['VipGranted', 'VipRenewed'] as const;
  private readonly byUser = new Map<string, VipHistoryEntry[]>();

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    if (event.type !== 'VipGranted' && event.type !== 'VipRenewed') return;
    const { recordId, userId, quality, expired, at, appId, keyId } = event.data;
    const entry: VipHistoryEntry = { position: recorded.position, action: 'granted', recordId, userId, quality, expired, at, appId, keyId };
    if (event.type === 'VipRenewed') Object.assign(entry, { action: 'renewed', previousExpired: event.data.previousExpired });
    const list = this.byUser.get(userId) ?? [];
    list.push(entry);
    this.byUser.set(userId, list);
  }

  history(userId: string): readonly VipHistoryEntry[] {
    return this.byUser.get(userId) ?? [];
  }
}
