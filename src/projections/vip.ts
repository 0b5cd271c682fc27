import type { VipEvent } from '../domain/events.js';
import { vipDecider, vipList, type VipRecord, type VipState } from '../domain/vip.js';
import type { RecordedEvent } from '../store/port.js';
import type { Projection } from './runner.js';

/** VIP records by internal user id, folded with the VIP decider's own evolve. */
export class VipReadModel implements Projection {
  readonly name = 'vip';
  private readonly byUser = new Map<string, VipState>();

  apply(event: RecordedEvent): void {
    if (event.type !== 'VipGranted' && event.type !== 'VipRenewed') return;
    const vipEvent = event as unknown as VipEvent;
    const userId = vipEvent.data.userId;
    this.byUser.set(userId, vipDecider.evolve(this.byUser.get(userId) ?? vipDecider.initialState(), vipEvent));
  }

  records(userId: string): VipRecord[] {
    const state = this.byUser.get(userId);
    return state ? vipList(state) : [];
  }
}
