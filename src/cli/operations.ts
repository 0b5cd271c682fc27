// `operations list` and `operations resolve`: the operator's view of platform operations whose
// outcome is not known, and the record of what someone who checked the platform decided.
import type { WorkContext } from '../system/workContext.js';
import { userInfo } from 'node:os';
import { ValidationError } from '../domain/errors.js';
import { operationMatches } from '../domain/operation.js';
import { toSpecTimestamp } from '../domain/time.js';
import { readOperation, type OperationRecord, type OperationsReadModel } from '../projections/operations.js';
import type { EventStore } from '../store/port.js';
import type { OperationOutcomes } from '../services/operationOutcomes.js';
import { table } from './table.js';

type Print = (text: string) => void;

function describe(record: OperationRecord) {
  return {
    operationId: record.operationId,
    status: record.status,
    kind: record.kind,
    oId: record.oId,
    userName: record.userName,
    request: record.request,
    appId: record.appId,
    keyId: record.keyId,
    node: record.node ?? null,
    idempotencyKey: record.idempotencyKey ?? null,
    requestId: record.requestId ?? null,
    requestedAt: toSpecTimestamp(record.requestedAt),
    reason: record.unknownReason ?? null,
    ...(record.resolution && { resolution: { ...record.resolution, at: toSpecTimestamp(record.resolution.at) } }),
    ...(record.answeredAfterResolution && { answeredAfterResolution: { ...record.answeredAfterResolution, at: toSpecTimestamp(record.answeredAfterResolution.at) } }),
  };
}

/** Resolved operations whose sender had the platform's answer afterwards: the two side by side. */
async function listConflicts(models: { store: Pick<EventStore, 'readStream'>; operations: OperationsReadModel }, json: boolean, print: Print): Promise<void> {
  const records = (await Promise.all(models.operations.answeredAfterResolution().map((id) => readOperation(models.store, id)))).filter((r) => r !== undefined);
  const listed = records.map(describe);
  if (json) return print(`${JSON.stringify(listed)}\n`);
  if (listed.length === 0) return print('No resolved operation was answered differently afterwards.\n');
  return print(
    table([
      ['OPERATION', 'RESOLVED AS', 'BY', 'PLATFORM ANSWERED', 'DETAIL'],
      ...records.map((r) => [
        r.operationId,
        r.resolution?.applied ? 'applied' : 'not applied',
        r.resolution?.by.kind === 'operator' ? r.resolution.by.name : `${r.resolution?.by.appId ?? ''}`,
        r.answeredAfterResolution!.answer.replace(/^Operation/, '').toLowerCase(),
        r.answeredAfterResolution!.detail,
      ]),
    ]),
  );
}

function operator(by: string | undefined): string {
  if (by?.trim()) return by.trim();
  try {
    return userInfo().username;
  } catch {
    return 'unknown operator';
  }
}

export async function operationsCommand(
  models: { store: Pick<EventStore, 'readStream'>; operations: OperationsReadModel; outcomes: OperationOutcomes; work: WorkContext },
  args: string[],
  options: { unknown?: boolean; conflicts?: boolean; search?: string; applied?: boolean; 'not-applied'?: boolean; note?: string; by?: string; json?: boolean },
  print: Print,
): Promise<void> {
  const [action, operationId] = args;
  switch (action) {
    case 'list': {
      if (options.conflicts) return listConflicts(models, options.json === true, print);
      const records = options.unknown
        ? models.operations.withoutOutcome('unknown')
        : [...models.operations.withoutOutcome('pending'), ...models.operations.withoutOutcome('unknown')].sort((a, b) => a.position - b.position);
      const search = options.search?.trim();
      const listed = records.filter((record) => !search || operationMatches(record, search)).map(describe);
      if (options.json) return print(`${JSON.stringify(listed)}\n`);
      if (listed.length === 0 && search) return print(`No operation without a known outcome matches "${search}".\n`);
      if (listed.length === 0) return print(options.unknown ? 'No operation has an unknown outcome.\n' : 'Every operation has a known outcome.\n');
      return print(
        table([
          ['OPERATION', 'IDEMPOTENCY-KEY', 'REQUEST-ID', 'STATUS', 'KIND', 'OID', 'APP', 'NODE', 'REQUESTED', 'REASON'],
          ...listed.map((o) => [
            o.operationId,
            o.idempotencyKey ?? '-',
            o.requestId ?? '-',
            o.status,
            o.kind.replace(/Requested$/, ''),
            o.oId,
            o.appId,
            o.node ?? '-',
            o.requestedAt,
            o.reason ?? '',
          ]),
        ]),
      );
    }
    case 'resolve': {
      if (!operationId) throw new ValidationError('operations resolve: the operation id is required');
      if (options.applied === options['not-applied']) throw new ValidationError('operations resolve: say what the platform shows, with exactly one of --applied and --not-applied');
      const by = operator(options.by);
      const record = await models.outcomes.resolve(models.work, operationId, options.applied === true, options.note?.trim() ?? '', { kind: 'operator', name: by });
      if (options.json) return print(`${JSON.stringify(describe(record))}\n`);
      return print(`Operation ${record.operationId} resolved as ${record.status === 'applied' ? 'applied' : 'not applied'} by ${by}\n`);
    }
    default:
      throw new ValidationError(`operations: unknown action "${action ?? ''}" (list, resolve)`);
  }
}
