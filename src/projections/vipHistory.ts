// A user's VIP grants and renewals, read from the user's VIP stream when asked: the stream is
// that history already, in order, so no read model keeps a second copy of every grant in memory
// (it would grow with every submission for as long as the process lives).
import type { Actor, VipEvent, VipQuality } from '../domain/events.js';
import { streams } from '../domain/events.js';
import type { EventStore, RecordedEvent } from '../store/port.js';

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

function entryOf(recorded: RecordedEvent): VipHistoryEntry | undefined {
  const event = recorded as unknown as VipEvent;
  if (event.type !== 'VipGranted' && event.type !== 'VipRenewed') return undefined;
  const { recordId, userId, quality, expired, at, appId, keyId } = event.data;
  const entry: VipHistoryEntry = { position: recorded.position, action: 'granted', recordId, userId, quality, expired, at, appId, keyId };
  if (event.type === 'VipRenewed') Object.assign(entry, { action: 'renewed', previousExpired: event.data.previousExpired });
  return entry;
}

/** Every VIP grant and renewal of the user (internal id), oldest first. */
export async function vipHistory(store: Pick<EventStore, 'readStream'>, userId: string): Promise<VipHistoryEntry[]> {
  const entries: VipHistoryEntry[] = [];
  for (const recorded of await store.readStream(streams.vip(userId))) {
    const entry = entryOf(recorded);
    if (entry) entries.push(entry);
  }
  return entries;
}
