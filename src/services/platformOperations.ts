// Platform operations (points, medals, items): the service records the request before it calls
// the platform (…Requested) and its outcome after (Applied / Rejected / Failed /
// OutcomeUnknown), so an auditor sees every attempt, including the ones that went wrong.
import {
  beforeAnyChange,
  changedNothing,
  ConflictError,
  failureOf,
  OutcomeUnknownError,
  PlatformRejectedError,
  PlatformTimeoutError,
  PlatformUnavailableError,
} from '../domain/errors.js';
import { streams, type Actor, type OperationRequested } from '../domain/events.js';
import { NEW_OPERATION, operationDecider, type OperationCommand, type OperationState, type SenderOutcome } from '../domain/operation.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import { newRecordId } from '../system/ids.js';
import { readOperation } from '../projections/operations.js';
import { handleCommand, type KnownState } from './commandHandler.js';
import type { WorkContext } from '../system/workContext.js';
import { answerFor } from './operationOutcomes.js';
import type { SyncedUser } from './userSync.js';

type OutcomeData = { message: string; bag?: Record<string, number> };

/**
 * What the platform call reports: applied, an answer that means it did nothing, or an answer that
 * does not tell whether it did it (`unknown`: never sent again, as for a timeout).
 */
export type CallResult = { applied: true; result: OutcomeData } | { applied: false; conflict: string } | { applied: 'unknown'; reason: string };

/**
 * The request's Idempotency-Key, when it sent one: bound to the operation before anything is
 * recorded or sent, so that from then on the key answers for this operation.
 */
export interface OperationClaim {
  stream: string;
  /** The Idempotency-Key as the caller sent it (what they will quote to an operator). */
  key: string;
  bind(operationId: string): Promise<void>;
}

export class PlatformOperations {
  constructor(private readonly deps: { store: EventStore; runner: ProjectionRunner; clock: Clock; nodeId: string }) {}

  /**
   * Records the request, runs `call`, records the outcome, and resolves with the platform's
   * message, or rejects with the error that describes the outcome. Once the request is recorded,
   * any failure whose outcome is not surely "nothing happened" is OutcomeUnknownError.
   */
  async run<T extends OperationRequested>(
    {
      work,
      type,
      actor,
      target,
      request,
      claim,
    }: { work: WorkContext; type: T['type']; actor: Actor; target: SyncedUser; request: T['data']['request']; claim?: OperationClaim | undefined },
    call: (operationId: string) => Promise<CallResult>,
  ): Promise<OutcomeData> {
    const { runner, clock, nodeId } = this.deps;
    const operationId = newRecordId();
    const oId = target.user.oId;
    await claim?.bind(operationId);
    const requested = {
      type,
      data: {
        operationId,
        oId,
        userId: target.user.id,
        userName: target.userName,
        request,
        at: clock.now(),
        node: nodeId,
        ...(claim && { claim: claim.stream, idempotencyKey: claim.key }),
        ...actor,
      },
    } as OperationRequested;
    // Nothing has been sent yet: a failure to record the intent leaves the key free.
    const recorded = await beforeAnyChange(this.handle(work, operationId, { type: 'RequestOperation', requested }, NEW_OPERATION));

    let outcome: SenderOutcome;
    let failure: Error | undefined;
    let answer: OutcomeData | undefined;
    try {
      const result = await call(operationId);
      if (result.applied === 'unknown') {
        failure = new OutcomeUnknownError(operationId, 'unknown', result.reason, false);
        outcome = { type: 'OperationOutcomeUnknown', data: { operationId, oId, reason: result.reason, at: clock.now() } };
      } else if (result.applied) {
        answer = result.result;
        outcome = { type: 'OperationApplied', data: { operationId, oId, ...result.result, at: clock.now() } };
      } else {
        failure = new ConflictError(result.conflict);
        outcome = { type: 'OperationRejected', data: { operationId, oId, message: result.conflict, at: clock.now() } };
      }
    } catch (error) {
      outcome = describeFailure(operationId, oId, error, clock.now());
      failure =
        outcome.type === 'OperationOutcomeUnknown' ? new OutcomeUnknownError(operationId, 'unknown', outcome.data.reason, error instanceof PlatformTimeoutError) : (error as Error);
    }
    let handled: Awaited<ReturnType<PlatformOperations['handle']>>;
    try {
      handled = await this.handle(work, operationId, { type: 'RecordOutcome', outcome }, { state: recorded.state, revision: recorded.revision });
    } catch {
      // The platform may have acted and the log does not say so: the answer a retry would get.
      throw new OutcomeUnknownError(operationId, 'pending', 'the service could not record the result');
    }
    // The outcome is recorded and the answer known: read models that lag only delay audits.
    await runner.waitForRecorded(handled.position);
    // An operator resolved it while the platform was answering: theirs is the answer that stands.
    if (handled.events[0]?.type === 'OperationAnsweredAfterResolution') return answerFor((await readOperation(this.deps.store, operationId))!);
    if (failure) throw failure;
    return answer!;
  }

  private handle(work: WorkContext, operationId: string, command: OperationCommand, known: KnownState<OperationState>) {
    return handleCommand(work, this.deps.store, streams.operation(operationId), operationDecider, command, { known });
  }
}

function describeFailure(operationId: string, oId: string, thrown: unknown, at: string): SenderOutcome {
  const error = failureOf(thrown);
  if (error instanceof PlatformRejectedError) {
    return { type: 'OperationRejected', data: { operationId, oId, message: error.platformMessage, at } };
  }
  // Our own refusal (a deduction the user cannot afford) also happens before sending.
  if (changedNothing(thrown) || error instanceof ConflictError) {
    return { type: 'OperationFailed', data: { operationId, oId, reason: (error as Error).message, at } };
  }
  // Sent and then a timeout, an HTTP error or an answer we could not read: it may have happened.
  const reason = error instanceof PlatformTimeoutError || error instanceof PlatformUnavailableError ? error.message : 'an unexpected error after sending';
  return { type: 'OperationOutcomeUnknown', data: { operationId, oId, reason, at } };
}
