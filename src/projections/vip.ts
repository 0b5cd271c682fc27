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
    const userId = vipEvent.data.userId;
    this.byUser.set(userId, { state: vipDecider.evolve(this.known(userId).state, vipEvent), revision: event.revision });
  }

  /** The user's VIP stream as far as applied: its state and the revision of its last event. */
  known(userId: string): { state: VipState; revision: number } {
    return this.byUser.get(userId) ?? { state: vipDecider.initialState(), revision: -1 };
  }

  records(userId: string): VipRecord[] {
    return vipList(this.known(userId).state);
  }
}
