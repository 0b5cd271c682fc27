import type { ItemsEditRequest, MedalGiveRequest, MedalRemoveRequest } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';
import type { OperationsReadModel } from './operations.js';
import type { Projection } from './runner.js';

/** Net item changes made through the service, per user and item (applied edits only). */
export class ItemsReadModel implements Projection {
  readonly name = 'items';
  readonly handles = ['OperationApplied'] as const;
  private readonly net = new Map<string, Map<string, number>>();

  constructor(private readonly operations: OperationsReadModel) {}

  apply(event: RecordedEvent): void {
    if (event.type !== 'OperationApplied') return;
    const op = this.operations.get((event.data as { operationId: string }).operationId);
    if (op?.kind !== 'ItemsEditRequested') return;
    const { item, sum } = op.request as ItemsEditRequest;
    const items = this.net.get(op.oId) ?? new Map<string, number>();
    items.set(item, (items.get(item) ?? 0) + sum);
    this.net.set(op.oId, items);
  }

  netChanges(oId: string): Record<string, number> {
    return Object.fromEntries(this.net.get(oId) ?? []);
  }
}

export interface MedalRecord extends MedalGiveRequest {
  givenAt: string;
  appId: string;
}

/** Medals given through the service and not removed since, per user. */
export class MedalsReadModel implements Projection {
  readonly name = 'medals';
  readonly handles = ['OperationApplied'] as const;
  private readonly byUser = new Map<string, Map<string, MedalRecord>>();

  constructor(private readonly operations: OperationsReadModel) {}

  apply(event: RecordedEvent): void {
    if (event.type !== 'OperationApplied') return;
    const op = this.operations.get((event.data as { operationId: string }).operationId);
    // Most applied operations are points or items: leave before allocating anything for them.
    if (!op || (op.kind !== 'MedalGiveRequested' && op.kind !== 'MedalRemoveRequested')) return;
    const medals = this.byUser.get(op.oId) ?? new Map<string, MedalRecord>();
    if (op.kind === 'MedalGiveRequested') {
      medals.set((op.request as MedalGiveRequest).name, { ...(op.request as MedalGiveRequest), givenAt: op.requestedAt, appId: op.appId });
    } else {
      medals.delete((op.request as MedalRemoveRequest).name);
    }
    this.byUser.set(op.oId, medals);
  }

  medals(oId: string): MedalRecord[] {
    return [...(this.byUser.get(oId)?.values() ?? [])];
  }
}
