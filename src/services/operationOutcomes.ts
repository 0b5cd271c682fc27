// What the log knows about a platform operation after the request that sent it is gone: the
// answer a retry gets, the closing of operations left pending by a process that died, and an
// operator's resolution of an unknown outcome.
import { ConcurrencyError, OperationNotAppliedError, OutcomeUnknownError, PlatformRejectedError, PlatformUnavailableError } from '../domain/errors.js';
import { streams, type OperationOutcome, type Resolver } from '../domain/events.js';
import { assertResolvable } from '../domain/operation.js';
import type { OperationRecord, OperationsReadModel } from '../projections/operations.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';

/**
 * The answer for a request bound to this operation, from the log alone: the platform's message
 * when it was applied, else the error that says what is known. Never sends anything.
 */
export function answerFor(record: OperationRecord): { message: string } {
  const { operationId, status, outcome, resolution } = record;
  switch (status) {
    case 'applied':
      return { message: resolution ? `Applied (resolved by an operator${resolution.note ? `: ${resolution.note}` : ''})` : outcome!.detail };
    case 'rejected':
      throw new PlatformRejectedError(outcome!.detail);
    case 'failed':
      if (resolution) throw new OperationNotAppliedError(operationId, resolution.note);
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
  async closePending(filter: { node: string } | { requestedBefore: string }): Promise<number> {
    const { operations, clock } = this.deps;
    const reason =
      'node' in filter
        ? `the node ${filter.node} stopped before the platform answered, and restarted`
        : 'its sender stopped before the platform answered, and never came back';
    let closed = 0;
    for (const record of operations.withoutOutcome('pending')) {
      const matches = 'node' in filter ? record.node === filter.node : record.requestedAt < filter.requestedBefore;
      if (!matches) continue;
      const event: OperationOutcome = { type: 'OperationOutcomeUnknown', data: { operationId: record.operationId, oId: record.oId, reason, at: clock.now() } };
      if (await this.appendIfUnchanged(record, event)) closed++;
    }
    return closed;
  }

  /** Records what someone who checked the platform found; only an unknown outcome can be resolved. */
  async resolve(operationId: string, applied: boolean, note: string, by: Resolver): Promise<OperationRecord> {
    const { store, runner, operations, clock } = this.deps;
    for (;;) {
      const record = operations.get(operationId);
      assertResolvable(operationId, record?.status);
      const event: OperationOutcome = { type: 'OperationResolved', data: { operationId, oId: record!.oId, applied, note, by, at: clock.now() } };
      if ((await this.appendIfUnchanged(record!, event)) !== undefined) return operations.get(operationId)!;
      // Something was recorded meanwhile (the platform's late answer): decide on what it says now.
      await runner.waitFor(await store.headPosition());
    }
  }

  private async appendIfUnchanged(record: OperationRecord, event: OperationOutcome): Promise<number | undefined> {
    try {
      const { position } = await this.deps.store.append(streams.operation(record.operationId), [event], { expectedRevision: record.revision });
      await this.deps.runner.waitFor(position);
      return position;
    } catch (error) {
      if (error instanceof ConcurrencyError) return undefined;
      throw error;
    }
  }
}
