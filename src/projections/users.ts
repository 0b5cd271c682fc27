import type { Profile } from '../domain/events.js';
import type { Projection } from './runner.js';
import { asDomain } from './recorded.js';
import type { RecordedEvent } from '../store/port.js';

export interface UserRecord extends Profile {
  id: string;
  oId: string;
  created: string;
  updated: string;
}

/** Local users by oId and by internal id. */
export class UsersReadModel implements Projection {
  readonly name = 'users';
  readonly handles = ['UserRegistered', 'UserProfileChanged'] as const;
  private readonly byOId = new Map<string, UserRecord>();
  private readonly byId = new Map<string, UserRecord>();

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    if (event.type === 'UserRegistered') {
      const { userId, oId, name, nickname, avatar, at } = event.data;
      const user: UserRecord = { id: userId, oId, name, nickname, avatar, created: at, updated: at };
      this.byOId.set(oId, user);
      this.byId.set(userId, user);
    } else if (event.type === 'UserProfileChanged') {
      const user = this.byOId.get(event.data.oId);
      if (user) Object.assign(user, event.data.changes, { updated: event.data.at });
    }
  }

  byOid(oId: string): UserRecord | undefined {
    return this.byOId.get(oId);
  }

  byUserId(userId: string): UserRecord | undefined {
    return this.byId.get(userId);
  }
}
