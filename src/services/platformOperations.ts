// Operations the platform owns (points, medals, items). Each attempt is recorded before the
// platform is called (…Requested) and its outcome after (Applied / Rejected / Failed /
// OutcomeUnknown), so an auditor sees every attempt, including the ones that went wrong.
import { changedNothing, ConflictError, PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../domain/errors.js';
import { streams, type Actor, type OperationOutcome, type OperationRequested } from '../domain/events.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import { newRecordId, type Clock } from './runtime.js';
import type { SyncedUser } from './userSync.js';

type OutcomeData = { message: string; bag?: Record<string, number> };

/** What the platform call reports: applied, or an answer that means it did nothing. */
export type CallResult = { applied: true; result: OutcomeData } | { applied: false; conflict: string };

export class PlatformOperations {
  constructor(private readonly deps: { store: EventStore; runner: ProjectionRunner; clock: Clock }) {}

  /**
   * Records the request, runs `call`, records the outcome, and resolves with the platform's
   * message, or rejects with the error that describes the outcome.
   */
  async run<T extends OperationRequested>(
    type: T['type'],
    actor: Actor,
    target: SyncedUser,
    request: T['data']['request'],
    call: (operationId: string) => Promise<CallResult>,
  ): Promise<OutcomeData> {
    const { store, runner, clock } = this.deps;
    const operationId = newRecordId();
    const stream = streams.operation(operationId);
    const oId = target.user.oId;
    const requested = {
      type,
      data: { operationId, oId, userId: target.user.id, userName: target.userName, request, at: clock.now(), ...actor },
    } as OperationRequested;
    const { nextExpectedRevision } = await store.append(stream, [requested], { expectedRevision: 'no_stream' });

    let outcome: OperationOutcome;
    let failure: Error | undefined;
    let answer: OutcomeData | undefined;
    try {
      const result = await call(operationId);
      if (result.applied) {
        answer = result.result;
        outcome = { type: 'OperationApplied', data: { operationId, oId, ...result.result, at: clock.now() } };
      } else {
        failure = new ConflictError(result.conflict);
        outcome = { type: 'OperationRejected', data: { operationId, oId, message: result.conflict, at: clock.now() } };
      }
    } catch (error) {
      failure = error as Error;
      outcome = describeFailure(operationId, oId, failure, clock.now());
    }
    const { position } = await store.append(stream, [outcome], { expectedRevision: nextExpectedRevision });
    await runner.waitFor(position);
    if (failure) throw failure;
    return answer!;
  }
}

function describeFailure(operationId: string, oId: string, error: Error, at: string): OperationOutcome {
  if (error instanceof PlatformRejectedError) {
    return { type: 'OperationRejected', data: { operationId, oId, message: error.platformMessage, at } };
  }
  // Our own refusal (a deduction the user cannot afford) also happens before sending.
  if (changedNothing(error) || error instanceof ConflictError) {
    return { type: 'OperationFailed', data: { operationId, oId, reason: error.message, at } };
  }
  // Sent and then a timeout, an HTTP error or an answer we could not read: it may have happened.
  const reason = error instanceof PlatformTimeoutError || error instanceof PlatformUnavailableError ? error.message : 'unexpected error';
  return { type: 'OperationOutcomeUnknown', data: { operationId, oId, reason, at } };
}
