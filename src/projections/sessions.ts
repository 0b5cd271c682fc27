import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import { jsonCodec, NumberColumn, SavedMap, StringColumn, type SavedMapState, type StringColumnState } from './columns.js';
import type { Projection } from './runner.js';

export interface SessionRecord {
  sessionId: string;
  userId: string;
  oId: string;
  /** ISO instant after which the session no longer counts. */
  expires: string;
}

/** Sessions started between two sweeps of the expired ones. */
const SWEEP_EVERY = 1000;

interface SessionsState {
  active: SavedMapState;
  startedIds: StringColumnState;
  startedExpires: Float64Array<ArrayBuffer>;
  swept: number;
  started: number;
}

/**
 * Sessions that have not been ended. Expiry is checked by the reader against its clock; expired
 * sessions are forgotten now and then (they answer as unknown ones do), oldest first, so that the
 * model holds the sessions of one lifetime rather than every session ever started.
 */
export class SessionsReadModel implements Projection {
  readonly name = 'sessions';
  readonly version = 1;
  readonly handles = ['SessionStarted', 'SessionEnded'] as const;
  private active = new SavedMap<SessionRecord>(jsonCodec);
  /** Every session id in the order they started, with when each expires (ms), from `swept` on not yet swept. */
  private startedIds = new StringColumn();
  private startedExpires = new NumberColumn((n) => new Float64Array(n));
  private swept = 0;
  private started = 0;

  constructor(private readonly now: () => string) {}

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    if (event.type === 'SessionStarted') {
      const { sessionId, userId, oId, expires } = event.data;
      this.active.set(sessionId, { sessionId, userId, oId, expires });
      this.startedIds.push(sessionId);
      this.startedExpires.push(Date.parse(expires));
      if (++this.started % SWEEP_EVERY === 0) this.sweep();
    } else if (event.type === 'SessionEnded') {
      this.active.delete(event.data.sessionId);
    }
  }

  snapshotState(): SessionsState {
    const { swept, started } = this;
    return { active: this.active.snapshotState(), startedIds: this.startedIds.snapshotState(), startedExpires: this.startedExpires.snapshotState(), swept, started };
  }

  restoreState(state: SessionsState): boolean {
    this.active = new SavedMap(jsonCodec, state.active);
    this.startedIds = new StringColumn(state.startedIds);
    this.startedExpires = new NumberColumn((n) => new Float64Array(n), state.startedExpires);
    ({ swept: this.swept, started: this.started } = state);
    return true;
  }

  encodeAhead(entries: number): boolean {
    return this.active.encodeAhead(entries);
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.active.get(sessionId);
  }

  /** Forgets the sessions expired by now, from the oldest; one that lives longer holds back the ones after it until it expires. */
  private sweep(): void {
    const now = Date.parse(this.now());
    while (this.swept < this.startedExpires.length && this.startedExpires.at(this.swept) <= now) this.active.delete(this.startedIds.at(this.swept++));
    // The swept part of the columns is dropped once it is most of them.
    if (this.swept > SWEEP_EVERY && this.swept * 2 > this.startedExpires.length) {
      const ids = new StringColumn();
      const expires = new NumberColumn((n) => new Float64Array(n));
      for (let i = this.swept; i < this.startedExpires.length; i++) {
        ids.pushFrom(this.startedIds, i);
        expires.push(this.startedExpires.at(i));
      }
      [this.startedIds, this.startedExpires, this.swept] = [ids, expires, 0];
    }
  }
}
