// User sync (docs/architecture.md, "User sync"): the platform is the truth for a user's profile; the service
// keeps a local record with an internal id that is generated once and never changes.
import type { Decider } from './decider.js';

/**
 * The platform's user ids (oId): decimal digits with no leading zero, at most 19 (its ids are
 * millisecond timestamps held in a signed 64-bit integer). One rule for sign-in, every request
 * and the CLI, so one user is never two ("00333" beside "333").
 */
export const OID_PATTERN = /^[1-9][0-9]{0,18}$/;
export const OID_RULE = 'digits with no leading zero, at most 19';
import type { Profile, UserEvent } from './events.js';

export type UserState = { exists: false } | ({ exists: true; userId: string; oId: string; created: string; updated: string } & Profile);

export type SyncUser = { type: 'SyncUser'; oId: string; profile: Profile; newUserId: string; at: string };

const PROFILE_FIELDS = ['name', 'nickname', 'avatar'] as const;

export const userDecider: Decider<UserState, SyncUser, UserEvent> = {
  initialState: () => ({ exists: false }),

  decide({ oId, profile, newUserId, at }, state) {
    if (!state.exists) return [{ type: 'UserRegistered', data: { userId: newUserId, oId, ...profile, at } }];
    const changes: Partial<Profile> = {};
    for (const field of PROFILE_FIELDS) if (state[field] !== profile[field]) changes[field] = profile[field];
    if (Object.keys(changes).length === 0) return [];
    return [{ type: 'UserProfileChanged', data: { userId: state.userId, oId, changes, at } }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered': {
        const { at, ...rest } = event.data;
        return { exists: true, ...rest, created: at, updated: at };
      }
      case 'UserProfileChanged':
        return state.exists ? { ...state, ...event.data.changes, updated: event.data.at } : state;
    }
  },
};
