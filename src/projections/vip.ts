import type { VipEvent } from '../domain/events.js';
import { vipDecider, vipList, type VipRecord, type VipState } from '../domain/vip.js';
import type { RecordedEvent } from '../store/port.js';
import { jsonCodec, SavedMap, type SavedMapState } from './columns.js';
import type { Projection } from './runner.js';

/**
 * VIP records by internal user id, folded with the VIP decider's own evolve, with the revision
 * of each user's stream: a submission is decided on this state, no stream read needed.
 */
export class VipReadModel implements Projection {
  readonly name = 'vip';
  readonly version = 1;
  readonly handles = ['VipGranted', 'VipRenewed'] as const;
  private byUser = new SavedMap<{ state: VipState; revision: number }>(jsonCodec);

  apply(event: RecordedEvent): void {
    if (event.type !== 'VipGranted' && event.type !== 'VipRenewed') return;
    const vipEvent = event as unknown as VipEvent;
    const known = this.byUser.get(vipEvent.data.userId);
    if (known) {
      known.state = vipDecider.evolve(known.state, vipEvent);
      known.revision = event.revision;
    } else {
      this.byUser.set(vipEvent.data.userId, { state: vipDecider.evolve(vipDecider.initialState(), vipEvent), revision: event.revision });
    }
  }

  snapshotState(): SavedMapState {
    return this.byUser.snapshotState();
  }

  restoreState(state: SavedMapState): boolean {
    this.byUser = new SavedMap(jsonCodec, state);
    return true;
  }

  encodeAhead(entries: number): boolean {
    return this.byUser.encodeAhead(entries);
  }

  /** The user's VIP stream as far as applied: its state and the revision of its last event. */
  known(userId: string): { state: VipState; revision: number } {
    // A copy: the entry itself changes as events are applied, and the caller decides on it later.
    const known = this.byUser.get(userId);
    return known ? { state: known.state, revision: known.revision } : { state: vipDecider.initialState(), revision: -1 };
  }

  records(userId: string): VipRecord[] {
    return vipList(this.known(userId).state);
  }
}
