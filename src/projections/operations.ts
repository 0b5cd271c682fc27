import type { Actor, OperationOutcome, OperationRequested } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';

export type OperationKind = OperationRequested['type'];

export interface OperationRecord extends Actor {
  operationId: string;
  /** Global log position of the request event: the record's place in history (audit cursors). */
  position: number;
  kind: OperationKind;
  oId: string;
  userId: string;
  userName: string;
  request: OperationRequested['data']['request'];
  requestedAt: string;
  outcome?: { type: OperationOutcome['type']; detail: string; at: string };
}

const REQUESTED = new Set<string>(['PointsEditRequested', 'MedalGiveRequested', 'MedalRemoveRequested', 'ItemsEditRequested']);
const OUTCOMES = new Set<string>(['OperationApplied', 'OperationRejected', 'OperationFailed', 'OperationOutcomeUnknown']);

/**
 * Every platform operation attempted through the service, joined with its outcome, oldest first
 * per user. Other read models (items, medals) look requests up here, so it runs before them.
 */
export class OperationsReadModel implements Projection {
  readonly name = 'operations';
  private readonly byId = new Map<string, OperationRecord>();
  private readonly byUser = new Map<string, OperationRecord[]>();

  apply(recorded: RecordedEvent): void {
    if (REQUESTED.has(recorded.type)) {
      const { type, data } = recorded as unknown as OperationRequested;
      const record: OperationRecord = {
        operationId: data.operationId,
        position: recorded.position,
        kind: type,
        oId: data.oId,
        userId: data.userId,
        userName: data.userName,
        request: data.request,
        requestedAt: data.at,
        appId: data.appId,
        keyId: data.keyId,
      };
      this.byId.set(record.operationId, record);
      const list = this.byUser.get(record.oId) ?? [];
      list.push(record);
      this.byUser.set(record.oId, list);
    } else if (OUTCOMES.has(recorded.type)) {
      const event = asDomain(recorded) as unknown as OperationOutcome;
      const record = this.byId.get(event.data.operationId);
      if (!record) return;
      const detail = 'message' in event.data ? event.data.message : event.data.reason;
      record.outcome = { type: event.type, detail, at: event.data.at };
    }
  }

  get(operationId: string): OperationRecord | undefined {
    return this.byId.get(operationId);
  }

  history(oId: string): readonly OperationRecord[] {
    return this.byUser.get(oId) ?? [];
  }
}
