// What the log knows about a platform operation after the request that sent it is gone: the
// answer a retry gets, the closing of operations left pending by a process that died, and an
// operator's resolution of an unknown outcome.
import { NotFoundError, OperationNotAppliedError, OutcomeUnknownError, PlatformRejectedError, PlatformUnavailableError } from '../domain/errors.js';
import { streams, type Resolver } from '../domain/events.js';
import { operationDecider, type OperationCommand } from '../domain/operation.js';
import { readOperation, type OperationRecord, type OperationsReadModel } from '../projections/operations.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { AlongsideWrite, EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import { handleCommand } from './commandHandler.js';
import type { WorkContext } from '../system/workContext.js';

/**
 * The answer for a request bound to this operation, from the log alone: the platform's message
 * when it was applied, else the error that says what is known. Never sends anything.
 */
/** Who resolved it, as an answer says it: the operator by name, or the app and key. */
export function resolverName(by: Resolver): string {
  return by.kind === 'operator' ? `operator ${by.name}` : `app ${by.appId} (key ${by.keyId}${by.allApps ? ', all apps' : ''})`;
}

export function answerFor(record: OperationRecord): { message: string } {
  const { operationId, status, outcome, resolution, answeredAfterResolution: late } = record;
  // A resolution is final; a platform answer that came after it is said beside it.
  const lateWord = late ? `; the platform answered the sender afterwards (${late.answer}: ${late.detail}), which is recorded beside the resolution for review` : '';
  switch (status) {
    case 'applied':
      return { message: resolution ? `Applied (resolved by ${resolverName(resolution.by)}${resolution.note ? `: ${resolution.note}` : ''}${lateWord})` : outcome!.detail };
    case 'rejected':
      throw new PlatformRejectedError(outcome!.detail);
    case 'failed':
      if (resolution) throw new OperationNotAppliedError(operationId, resolverName(resolution.by), `${resolution.note}${lateWord}`, late?.answer === 'OperationApplied');
      throw new PlatformUnavailableError(outcome!.detail, false);
    case 'unknown':
      throw new OutcomeUnknownError(operationId, 'unknown', record.unknownReason ?? 'the platform did not answer');
    case 'pending':
      throw new OutcomeUnknownError(operationId, 'pending', 'the request that sent it stopped before the platform answered');
  }
}

export class OperationOutcomes {
  constructor(private readonly deps: { store: EventStore; runner: ProjectionRunner; operations: OperationsReadModel; clock: Clock }) {}

  /**
   * Marks as unknown the operations still pending that `node` sent (at its start: it died holding
   * them), or that were requested before `requestedBefore` (any node: their sender is gone for
   * good). An operation whose sender answers meanwhile keeps that answer. Returns how many.
   */
  async closePending(work: WorkContext, filter: { node: string } | { requestedBefore: string }): Promise<number> {
    const { operations, clock } = this.deps;
    const reason =
      'node' in filter ? `the node ${filter.node} stopped before the platform answered, and restarted` : 'its sender stopped before the platform answered, and never came back';
    let closed = 0;
    for (const record of operations.withoutOutcome('pending')) {
      const matches = 'node' in filter ? record.node === filter.node : record.requestedAt < filter.requestedBefore;
      if (!matches) continue;
      const { events } = await this.handle(work, record, { type: 'CloseAsUnknown', operationId: record.operationId, reason, at: clock.now() });
      if (events.length > 0) closed++;
    }
    return closed;
  }

  /**
   * The answer for a retry of the request bound to this operation (see answerFor), from the
   * operation's stream.
   */
  async answer(operationId: string): Promise<{ message: string }> {
    const record = await readOperation(this.deps.store, operationId);
    if (!record) throw new OutcomeUnknownError(operationId, 'pending', 'the request that sent it stopped before recording it');
    return answerFor(record);
  }

  /**
   * Records what someone who checked the platform found; only an unknown outcome can be resolved.
   * `fence`: the Idempotency-Key claim of the request that asks, when it sent one; `reaches`:
   * whether the one who asks may act on an operation of that app.
   */
  async resolve(
    work: WorkContext,
    operationId: string,
    applied: boolean,
    note: string,
    by: Resolver,
    fence?: () => AlongsideWrite,
    reaches: (appId: string) => boolean = () => true,
  ): Promise<OperationRecord> {
    const record = await readOperation(this.deps.store, operationId);
    if (!record || !reaches(record.appId)) throw new NotFoundError(`No operation ${operationId}`);
    await this.handle(work, record, { type: 'ResolveOutcome', operationId, applied, note, by, at: this.deps.clock.now() }, fence);
    return (await readOperation(this.deps.store, operationId))!;
  }

  /** Decided on the record as last read; the append checks it is still current. */
  private async handle(work: WorkContext, record: OperationRecord, command: OperationCommand, fence?: () => AlongsideWrite) {
    const known = { state: { status: record.status, oId: record.oId, ...(record.resolution && { resolved: true as const }) }, revision: record.revision };
    const handled = await handleCommand(work, this.deps.store, streams.operation(record.operationId), operationDecider, command, { known, fence });
    await this.deps.runner.waitForRecorded(handled.position);
    return handled;
  }
}
