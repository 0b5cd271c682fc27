import type { Profile } from '../domain/events.js';
import type { Projection } from './runner.js';
import { asDomain } from './recorded.js';
import type { RecordedEvent } from '../store/port.js';
import { encodeAheadIn, jsonCodec, SavedMap, textCodec, type SavedMapState } from './columns.js';

export interface UserRecord extends Profile {
  id: string;
  oId: string;
  created: string;
  updated: string;
}

/** Local users by oId and by internal id. */
export class UsersReadModel implements Projection {
  readonly name = 'users';
  readonly version = 1;
  readonly handles = ['UserRegistered', 'UserProfileChanged'] as const;
  private byOId = new SavedMap<UserRecord>(jsonCodec);
  /** The oId of each user, by internal id. */
  private oIdById = new SavedMap<string>(textCodec);

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    if (event.type === 'UserRegistered') {
      const { userId, oId, name, nickname, avatar, at } = event.data;
      const user: UserRecord = { id: userId, oId, name, nickname, avatar, created: at, updated: at };
      this.byOId.set(oId, user);
      this.oIdById.set(userId, oId);
    } else if (event.type === 'UserProfileChanged') {
      const user = this.byOId.get(event.data.oId);
      if (user) Object.assign(user, event.data.changes, { updated: event.data.at });
    }
  }

  snapshotState(): { byOId: SavedMapState; oIdById: SavedMapState } {
    return { byOId: this.byOId.snapshotState(), oIdById: this.oIdById.snapshotState() };
  }

  restoreState(state: ReturnType<UsersReadModel['snapshotState']>): boolean {
    this.byOId = new SavedMap(jsonCodec, state.byOId);
    this.oIdById = new SavedMap(textCodec, state.oIdById);
    return true;
  }

  encodeAhead(entries: number): boolean {
    return encodeAheadIn([this.byOId, this.oIdById], entries);
  }

  byOid(oId: string): UserRecord | undefined {
    return this.byOId.get(oId);
  }

  byUserId(userId: string): UserRecord | undefined {
    const oId = this.oIdById.get(userId);
    return oId === undefined ? undefined : this.byOId.get(oId);
  }
}
