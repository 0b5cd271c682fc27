// Audit: the history of one user's points edits, medals, item edits and VIP records, oldest first,
// in the spec's timestamp form and the shapes the API documents. Platform operations are paged on
// the operations read model's index and only the page is read from the operations' streams; VIP
// records are the user's VIP stream. The HTTP endpoints and the CLI both answer from here, so an
// auditor sees the same entries either way. No platform call: an oId the service never acted on
// has an empty history. Each entry names the request that made it, from its event's metadata.
import type * as v from 'valibot';
import type {
  ItemsAuditEntry as ItemsAuditEntrySchema,
  MedalAuditEntry as MedalAuditEntrySchema,
  PointsAuditEntry as PointsAuditEntrySchema,
  VipAuditEntry as VipAuditEntrySchema,
} from '../contract/answers.js';
import type { AuditQuery } from '../contract/requests.js';
import type { ItemsEditRequest, MedalGiveRequest, MedalRemoveRequest, OperationOutcome, PointsEditRequest } from '../domain/events.js';
import { toSpecTimestamp } from '../domain/time.js';
import { readOperations, type OperationKind, type OperationRecord, type OperationRef, type OperationsReadModel } from './operations.js';
import type { UsersReadModel } from './users.js';
import type { EventStore } from '../store/port.js';
import { requestIdOf } from '../system/eventMetadata.js';
import { vipHistory, type VipHistoryEntry } from './vipHistory.js';

export type PointsAuditEntry = v.InferOutput<typeof PointsAuditEntrySchema>;
export type VipAuditEntry = v.InferOutput<typeof VipAuditEntrySchema>;
export type MedalAuditEntry = v.InferOutput<typeof MedalAuditEntrySchema>;
export type ItemsAuditEntry = v.InferOutput<typeof ItemsAuditEntrySchema>;
export type PageRequest = v.InferOutput<typeof AuditQuery>;

/** A page with no bound: the whole history (the CLI prints it all). */
export const WHOLE_HISTORY: PageRequest = { limit: Number.MAX_SAFE_INTEGER };

export interface Page<T> {
  items: T[];
  /** Later entries exist: ask again with `after=next`. */
  next?: number;
  /** Earlier entries exist: ask again with `before=prev`. */
  prev?: number;
}

/** Index of the first entry whose position is greater than `position` (entries are in log order). */
function firstAfter(entries: readonly { position: number }[], position: number): number {
  let [low, high] = [0, entries.length];
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.position <= position) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * One page of a history in log order. `after` pages forward from a cursor, `before` backward
 * (the `limit` entries just before it, still oldest first); both together bound a range.
 */
export function pageOf<T extends { position: number }>(entries: readonly T[], request: PageRequest): Page<T> {
  const start = request.after === undefined ? 0 : firstAfter(entries, request.after);
  const end = request.before === undefined ? entries.length : firstAfter(entries, request.before - 1);
  const items =
    request.before !== undefined && request.after === undefined
      ? entries.slice(Math.max(start, end - request.limit), end)
      : entries.slice(start, Math.min(end, start + request.limit));
  const page: Page<T> = { items };
  if (items.length === 0) return page;
  const [first, last] = [items[0]!.position, items.at(-1)!.position];
  if (entries.at(-1)!.position > last) page.next = last;
  if (entries[0]!.position < first) page.prev = first;
  return page;
}

const ANSWERS: Partial<Record<OperationOutcome['type'], 'applied' | 'rejected' | 'failed' | 'unknown'>> = {
  OperationApplied: 'applied',
  OperationRejected: 'rejected',
  OperationFailed: 'failed',
  OperationOutcomeUnknown: 'unknown',
};

function outcomeOf(record: OperationRecord): PointsAuditEntry['outcome'] {
  const { outcome, resolution } = record;
  if (!outcome) return { status: 'pending' };
  const at = toSpecTimestamp(outcome.at);
  if (resolution) {
    const { applied, note, by } = resolution;
    const late = record.answeredAfterResolution;
    return {
      status: record.status,
      reason: record.unknownReason,
      at,
      resolution: { applied, note, by, at: toSpecTimestamp(resolution.at) },
      ...(late && { answeredAfterResolution: { answer: ANSWERS[late.answer]!, detail: late.detail, at: toSpecTimestamp(late.at) } }),
    };
  }
  switch (outcome.type) {
    case 'OperationApplied':
    case 'OperationRejected':
      return { status: record.status, message: outcome.detail, at };
    default:
      return { status: record.status, reason: outcome.detail, at };
  }
}

/** Request ids by global position. */
type RequestIds = Map<number, string>;

/** Reads streams through `store`, noting the request id of each event read that carries one. */
function notingRequestIds(store: Pick<EventStore, 'readStream'>, requestIds: RequestIds): Pick<EventStore, 'readStream'> {
  return {
    async readStream(streamName) {
      const events = await store.readStream(streamName);
      for (const event of events) {
        const requestId = requestIdOf(event.metadata);
        if (requestId !== undefined) requestIds.set(event.position, requestId);
      }
      return events;
    },
  };
}

const withRequestId = (requestId: string | undefined) => (requestId === undefined ? {} : { requestId });

/** What every operation's entry starts with: where it is, when, who asked, which operation. */
function operationEntry(record: OperationRecord, requestIds: RequestIds) {
  return {
    position: record.position,
    time: toSpecTimestamp(record.requestedAt),
    appId: record.appId,
    keyId: record.keyId,
    ...withRequestId(requestIds.get(record.position)),
    operationId: record.operationId,
  };
}

function pointsEntry(record: OperationRecord, requestIds: RequestIds): PointsAuditEntry {
  const { point, memo } = record.request as PointsEditRequest;
  return { ...operationEntry(record, requestIds), request: { point, memo }, outcome: outcomeOf(record) };
}

function medalEntry(record: OperationRecord, requestIds: RequestIds): MedalAuditEntry {
  if (record.kind === 'MedalRemoveRequested') {
    return { ...operationEntry(record, requestIds), action: 'remove', request: { name: (record.request as MedalRemoveRequest).name }, outcome: outcomeOf(record) };
  }
  const { name, description, attr, data } = record.request as MedalGiveRequest;
  return { ...operationEntry(record, requestIds), action: 'give', request: { name, description, attr, data }, outcome: outcomeOf(record) };
}

function itemsEntry(record: OperationRecord, requestIds: RequestIds): ItemsAuditEntry {
  const { item, sum } = record.request as ItemsEditRequest;
  return { ...operationEntry(record, requestIds), request: { item, sum }, outcome: outcomeOf(record) };
}

/** Two histories in log order → one in log order. */
function merged(a: readonly OperationRef[], b: readonly OperationRef[]): OperationRef[] {
  return [...a, ...b].sort((x, y) => x.position - y.position);
}

function vipEntry(entry: VipHistoryEntry, requestIds: RequestIds): VipAuditEntry {
  return {
    position: entry.position,
    time: toSpecTimestamp(entry.at),
    appId: entry.appId,
    keyId: entry.keyId,
    ...withRequestId(requestIds.get(entry.position)),
    action: entry.action,
    recordId: entry.recordId,
    quality: entry.quality,
    expired: toSpecTimestamp(entry.expired),
    ...(entry.previousExpired !== undefined && { previousExpired: toSpecTimestamp(entry.previousExpired) }),
  };
}

export class AuditQueries {
  constructor(private readonly models: { operations: OperationsReadModel; users: UsersReadModel; store: Pick<EventStore, 'readStream'> }) {}

  /** One page of the points edits for this oId (made by the apps `reaches` accepts, when given). */
  points(oId: string, request: PageRequest, reaches?: (appId: string) => boolean): Promise<Page<PointsAuditEntry>> {
    return this.operations(this.history(oId, ['PointsEditRequested'], reaches), request, pointsEntry);
  }

  /** One page of the medals given and removed for this oId (by the apps `reaches` accepts, when given). */
  medals(oId: string, request: PageRequest, reaches?: (appId: string) => boolean): Promise<Page<MedalAuditEntry>> {
    return this.operations(this.history(oId, ['MedalGiveRequested', 'MedalRemoveRequested'], reaches), request, medalEntry);
  }

  /** One page of the item edits for this oId (made by the apps `reaches` accepts, when given). */
  items(oId: string, request: PageRequest, reaches?: (appId: string) => boolean): Promise<Page<ItemsAuditEntry>> {
    return this.operations(this.history(oId, ['ItemsEditRequested'], reaches), request, itemsEntry);
  }

  /** One page of the VIP grants and renewals for this oId (made by the apps `reaches` accepts, when given). */
  async vip(oId: string, request: PageRequest, reaches?: (appId: string) => boolean): Promise<Page<VipAuditEntry>> {
    const user = this.models.users.byOid(oId);
    const requestIds: RequestIds = new Map();
    const history = user ? await vipHistory(notingRequestIds(this.models.store, requestIds), user.id) : [];
    return pageOf(
      (reaches ? history.filter((entry) => reaches(entry.appId)) : history).map((entry) => vipEntry(entry, requestIds)),
      request,
    );
  }

  private history(oId: string, kinds: readonly OperationKind[], reaches?: (appId: string) => boolean): OperationRef[] {
    return kinds.map((kind) => this.models.operations.history(oId, kind, reaches)).reduce(merged);
  }

  /** Pages the history, then reads only that page's operations from their streams. */
  private async operations<E>(history: OperationRef[], request: PageRequest, entry: (record: OperationRecord, requestIds: RequestIds) => E): Promise<Page<E>> {
    const page = pageOf(history, request);
    const requestIds: RequestIds = new Map();
    const records = await readOperations(notingRequestIds(this.models.store, requestIds), page.items);
    return { ...page, items: records.map((record) => entry(record, requestIds)) };
  }
}
