// What applied operations changed on the platform, per user: the operations read model hands
// each applied request to these folds (they need the request, which only it keeps until then).
import type { MedalGiveRequest, OperationRequested } from '../domain/events.js';
import { mapCodec, SavedMap, type SavedMapState } from './columns.js';
import type { AppliedOperationsFold } from './operations.js';

/** Net item changes made through the service, per user and item (applied edits only). */
export class ItemsReadModel implements AppliedOperationsFold {
  private net = new SavedMap<Map<string, number>>(mapCodec);

  applied(requested: OperationRequested): void {
    if (requested.type !== 'ItemsEditRequested') return;
    const { oId, request } = requested.data;
    const items = this.net.get(oId) ?? new Map<string, number>();
    items.set(request.item, (items.get(request.item) ?? 0) + request.sum);
    this.net.set(oId, items);
  }

  snapshotState(): SavedMapState {
    return this.net.snapshotState();
  }

  restoreState(state: SavedMapState): void {
    this.net = new SavedMap(mapCodec, state);
  }

  encodeAhead(entries: number): boolean {
    return this.net.encodeAhead(entries);
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
export class MedalsReadModel implements AppliedOperationsFold {
  private byUser = new SavedMap<Map<string, MedalRecord>>(mapCodec);

  applied(requested: OperationRequested): void {
    if (requested.type !== 'MedalGiveRequested' && requested.type !== 'MedalRemoveRequested') return;
    const { oId, at, appId } = requested.data;
    const medals = this.byUser.get(oId) ?? new Map<string, MedalRecord>();
    if (requested.type === 'MedalGiveRequested') medals.set(requested.data.request.name, { ...requested.data.request, givenAt: at, appId });
    else medals.delete(requested.data.request.name);
    this.byUser.set(oId, medals);
  }

  snapshotState(): SavedMapState {
    return this.byUser.snapshotState();
  }

  restoreState(state: SavedMapState): void {
    this.byUser = new SavedMap(mapCodec, state);
  }

  encodeAhead(entries: number): boolean {
    return this.byUser.encodeAhead(entries);
  }

  medals(oId: string): MedalRecord[] {
    return [...(this.byUser.get(oId)?.values() ?? [])];
  }
}
