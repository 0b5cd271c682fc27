import type { Actor, OperationOutcome, OperationRequested, Resolver } from '../domain/events.js';
import { isOperationRequested, statusAfter, type OperationStatus } from '../domain/operation.js';
import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';

export type OperationKind = OperationRequested['type'];

export interface OperationRecord extends Actor {
  operationId: string;
  /** Global log position of the request event: the record's place in history (audit cursors). */
  position: number;
  /** Revision of the operation stream's last event: the expected revision of the next append. */
  revision: number;
  kind: OperationKind;
  oId: string;
  userId: string;
  userName: string;
  request: OperationRequested['data']['request'];
  requestedAt: string;
  /** The node that sent it, when recorded. */
  node?: string;
  /** The Idempotency-Key stream of the request, when it sent one. */
  claim?: string;
  status: OperationStatus;
  /** The latest outcome; an operator's resolution or a late answer replaces an unknown one. */
  outcome?: { type: OperationOutcome['type']; detail: string; at: string };
  /** Why it became unknown, kept after a resolution settles it. */
  unknownReason?: string;
  resolution?: { applied: boolean; note: string; by: Resolver; at: string };
}

const OUTCOMES = new Set<string>(['OperationApplied', 'OperationRejected', 'OperationFailed', 'OperationOutcomeUnknown', 'OperationResolved']);

function detailOf(event: OperationOutcome): string {
  const data = event.data;
  if ('message' in data) return data.message;
  if ('reason' in data) return data.reason;
  return data.note;
}

/**
 * Every platform operation attempted through the service, joined with its outcome, oldest first
 * per user. Other read models (items, medals) look requests up here, so it runs before them.
 */
export class OperationsReadModel implements Projection {
  readonly name = 'operations';
  readonly handles = ['PointsEditRequested', 'MedalGiveRequested', 'MedalRemoveRequested', 'ItemsEditRequested', 'OperationApplied', 'OperationRejected', 'OperationFailed', 'OperationOutcomeUnknown', 'OperationResolved', 'OperationAbandoned'] as const;
  private readonly byId = new Map<string, OperationRecord>();
  private readonly byUser = new Map<string, OperationRecord[]>();
  /** Operations without a known outcome (pending or unknown), in log order. */
  private readonly unsettled = new Map<string, OperationRecord>();
  /** Operations a takeover ruled out before their intent was recorded (rare: a stalled request). */
  private readonly abandoned = new Set<string>();

  apply(recorded: RecordedEvent): void {
    if (recorded.type === 'OperationAbandoned') {
      this.abandoned.add((recorded.data as { operationId: string }).operationId);
    } else if (isOperationRequested(recorded)) {
      const { type, data } = recorded;
      const record: OperationRecord = {
        operationId: data.operationId,
        position: recorded.position,
        revision: recorded.revision,
        kind: type,
        oId: data.oId,
        userId: data.userId,
        userName: data.userName,
        request: data.request,
        requestedAt: data.at,
        appId: data.appId,
        keyId: data.keyId,
        ...(data.node !== undefined && { node: data.node }),
        ...(data.claim !== undefined && { claim: data.claim }),
        status: 'pending',
      };
      this.byId.set(record.operationId, record);
      this.unsettled.set(record.operationId, record);
      const list = this.byUser.get(record.oId) ?? [];
      list.push(record);
      this.byUser.set(record.oId, list);
    } else if (OUTCOMES.has(recorded.type)) {
      const event = asDomain(recorded) as unknown as OperationOutcome;
      const record = this.byId.get(event.data.operationId);
      if (!record) return;
      record.revision = recorded.revision;
      record.status = statusAfter(event);
      record.outcome = { type: event.type, detail: detailOf(event), at: event.data.at };
      if (event.type === 'OperationOutcomeUnknown') record.unknownReason = event.data.reason;
      if (event.type === 'OperationResolved') {
        const { applied, note, by, at } = event.data;
        record.resolution = { applied, note, by, at };
      }
      if (record.status === 'pending' || record.status === 'unknown') this.unsettled.set(record.operationId, record);
      else this.unsettled.delete(record.operationId);
    }
  }

  get(operationId: string): OperationRecord | undefined {
    return this.byId.get(operationId);
  }

  isAbandoned(operationId: string): boolean {
    return this.abandoned.has(operationId);
  }

  history(oId: string): readonly OperationRecord[] {
    return this.byUser.get(oId) ?? [];
  }

  /** Operations whose outcome is not known, oldest first. */
  withoutOutcome(status: 'pending' | 'unknown'): OperationRecord[] {
    return [...this.unsettled.values()].filter((record) => record.status === status).sort((a, b) => a.position - b.position);
  }
}
