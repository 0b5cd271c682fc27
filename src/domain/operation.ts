// A platform operation's life: requested, then an outcome. An unknown outcome stays unknown until
// a later answer or an operator's resolution settles it; nothing sends it again.
import { ConflictError, NotFoundError } from './errors.js';
import type { OperationOutcome } from './events.js';

export type OperationStatus = 'pending' | 'applied' | 'rejected' | 'failed' | 'unknown';

export function statusAfter(outcome: OperationOutcome): OperationStatus {
  switch (outcome.type) {
    case 'OperationApplied':
      return 'applied';
    case 'OperationRejected':
      return 'rejected';
    case 'OperationFailed':
      return 'failed';
    case 'OperationOutcomeUnknown':
      return 'unknown';
    case 'OperationResolved':
      return outcome.data.applied ? 'applied' : 'failed';
  }
}

/** Only an unknown outcome can be resolved: a known one is the platform's word, not ours. */
export function assertResolvable(operationId: string, status: OperationStatus | undefined): void {
  if (status === undefined) throw new NotFoundError(`No operation ${operationId}`);
  if (status !== 'unknown') throw new ConflictError(`operation ${operationId} is ${status}, not unknown: only an unknown outcome can be resolved`);
}
