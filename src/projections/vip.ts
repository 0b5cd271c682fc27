import type { VipEvent } from '../domain/events.js';
import { vipDecider, vipList, type VipRecord, type VipState } from '../domain/vip.js';
import type { RecordedEvent } from '../store/port.js';
import type { Projection } from './runner.js';

/**
 * VIP records by internal user id, folded with the VIP decider's own evolve, with the revision
 * of each user's stream: a submission is decided on this state, no stream read needed.
 */
export class VipReadModel implements Projection {
  readonly name = 'vip';
  readonly handles = ['VipGranted', 'VipRenewed'] as const;
  private readonly byUser = new Map<string, { state: VipState; revision: number }>();

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
