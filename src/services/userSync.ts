// docs/api.md "Conventions": every admin operation that names an oId first asks the platform for the user and
// records what it learns (UserRegistered for a new user, UserProfileChanged when the profile
// moved). Concurrent lookups of one user share a single platform call.
import { beforeAnyChange, UserNotFoundError } from '../domain/errors.js';
import { streams } from '../domain/events.js';
import { userDecider } from '../domain/user.js';
import type { CommunityPlatform } from '../community/port.js';
import type { UserRecord, UsersReadModel } from '../projections/users.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import { handleCommand } from './commandHandler.js';
import type { Clock } from '../system/clock.js';
import { newRecordId } from '../system/ids.js';
import type { WorkContext } from '../system/workContext.js';

export interface SyncedUser {
  user: UserRecord;
  /** The platform's current user name, which its admin endpoints take. */
  userName: string;
}

export class UserSync {
  private readonly inFlight = new Map<string, Promise<SyncedUser>>();

  constructor(private readonly deps: { store: EventStore; platform: CommunityPlatform; runner: ProjectionRunner; users: UsersReadModel; clock: Clock }) {}

  /** `work`: what the sync records is stamped with (the first of concurrent lookups' work). */
  sync(work: WorkContext, oId: string): Promise<SyncedUser> {
    let pending = this.inFlight.get(oId);
    if (!pending) {
      pending = this.syncNow(work, oId).finally(() => this.inFlight.delete(oId));
      this.inFlight.set(oId, pending);
    }
    return pending;
  }

  private async syncNow(work: WorkContext, oId: string): Promise<SyncedUser> {
    const { store, platform, runner, users, clock } = this.deps;
    // Every handler syncs before it writes: a failed lookup leaves nothing changed.
    const found = await beforeAnyChange(platform.getUser(oId));
    if (!found) throw new UserNotFoundError(oId);
    const profile = { name: found.userName, nickname: found.nickname, avatar: found.avatar };
    const known = users.byOid(oId);
    const unchanged = known && known.name === profile.name && known.nickname === profile.nickname && known.avatar === profile.avatar;
    if (!unchanged) {
      const { position } = await handleCommand(work, store, streams.user(oId), userDecider, {
        type: 'SyncUser',
        oId,
        profile,
        newUserId: newRecordId(),
        at: clock.now(),
      });
      if (position !== undefined) await runner.waitFor(position);
    }
    return { user: users.byOid(oId)!, userName: found.userName };
  }
}
