// VIP records are the service's own truth: at most one record per user and quality. Submitting
// a quality the user already has keeps the record (and its id) and replaces its expiry.
import type { Decider } from './decider.js';
import type { Actor, VipEvent, VipQuality } from './events.js';

export const VIP_QUALITIES = ['svip', 'vip'] as const satisfies readonly VipQuality[];

export interface VipRecord {
  id: string;
  userId: string;
  quality: VipQuality;
  expired: string;
  created: string;
  updated: string;
}

/** The records of one user, by quality. */
export type VipState = Partial<Record<VipQuality, VipRecord>>;

export type SubmitVip = { type: 'SubmitVip'; userId: string; quality: VipQuality; expired: string; newRecordId: string; at: string } & Actor;

export const vipDecider: Decider<VipState, SubmitVip, VipEvent> = {
  initialState: () => ({}),

  decide({ userId, quality, expired, newRecordId, at, appId, keyId }, state) {
    const current = state[quality];
    if (!current) return [{ type: 'VipGranted', data: { recordId: newRecordId, userId, quality, expired, at, appId, keyId } }];
    return [{ type: 'VipRenewed', data: { recordId: current.id, userId, quality, expired, previousExpired: current.expired, at, appId, keyId } }];
  },

  evolve(state, event) {
    const { recordId, userId, quality, expired, at } = event.data;
    const created = event.type === 'VipGranted' ? at : (state[quality]?.created ?? at);
    return { ...state, [quality]: { id: recordId, userId, quality, expired, created, updated: at } };
  },
};

/** The spec's list order: `svip` before `vip`. */
export function vipList(state: VipState): VipRecord[] {
  return VIP_QUALITIES.flatMap((q) => (state[q] ? [state[q]] : []));
}
