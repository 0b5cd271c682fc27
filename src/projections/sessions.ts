import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import { jsonCodec, SavedMap, type SavedMapState } from './columns.js';
import type { Projection } from './runner.js';

export interface SessionRecord {
  sessionId: string;
  userId: string;
  oId: string;
  /** ISO instant after which the session no longer counts. */
  expires: string;
}

/** Sessions that have not been ended (expiry is checked by the reader against its clock). */
export class SessionsReadModel implements Projection {
  readonly name = 'sessions';
  readonly version = 1;
  readonly handles = ['SessionStarted', 'SessionEnded'] as const;
  private active = new SavedMap<SessionRecord>(jsonCodec);

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    if (event.type === 'SessionStarted') {
      const { sessionId, userId, oId, expires } = event.data;
      this.active.set(sessionId, { sessionId, userId, oId, expires });
    } else if (event.type === 'SessionEnded') {
      this.active.delete(event.data.sessionId);
    }
  }

  snapshotState(): SavedMapState {
    return this.active.snapshotState();
  }

  restoreState(state: SavedMapState): boolean {
    this.active = new SavedMap(jsonCodec, state);
    return true;
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.active.get(sessionId);
  }
}
