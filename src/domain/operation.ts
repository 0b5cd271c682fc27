// A platform operation's life: requested, then an outcome. An unknown outcome stays unknown until
// a later answer or an operator's resolution settles it; nothing sends it again.
import type { Decider } from './decider.js';
import { ConflictError, NotFoundError } from './errors.js';
import { ClaimLostError } from './idempotency.js';
import type { OperationEvent, OperationOutcome, OperationRequested, OperationResolved, Resolver } from './events.js';

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

/** The types of an operation's request, and of its outcomes. */
export const OPERATION_REQUESTED_TYPES = [
  'PointsEditRequested',
  'MedalGiveRequested',
  'MedalRemoveRequested',
  'ItemsEditRequested',
] as const satisfies readonly OperationRequested['type'][];
export const OPERATION_OUTCOME_TYPES = [
  'OperationApplied',
  'OperationRejected',
  'OperationFailed',
  'OperationOutcomeUnknown',
  'OperationResolved',
] as const satisfies readonly OperationOutcome['type'][];

const REQUESTED_TYPES: ReadonlySet<string> = new Set(OPERATION_REQUESTED_TYPES);

export function isOperationRequested(event: { type: string }): event is OperationRequested {
  return REQUESTED_TYPES.has(event.type);
}

/** `resolved`: an operator settled it; from then on nothing changes its status. */
export type OperationState = { status: 'none' } | { status: 'abandoned' } | { status: OperationStatus; oId: string; resolved?: true };

/** The outcome the request that sent the operation learnt (or did not) from the platform. */
export type SenderOutcome = Exclude<OperationOutcome, OperationResolved>;

export type OperationCommand =
  | { type: 'RequestOperation'; requested: OperationRequested }
  | { type: 'RecordOutcome'; outcome: SenderOutcome }
  /** Its sender is gone: a pending operation becomes unknown (one with an outcome stays as it is). */
  | { type: 'CloseAsUnknown'; operationId: string; reason: string; at: string }
  | { type: 'ResolveOutcome'; operationId: string; applied: boolean; note: string; by: Resolver; at: string }
  /**
   * A retry takes over a key bound to this operation while nothing of it is recorded: from now on
   * it can never be recorded, so the request that bound it (if it still runs) cannot send it.
   */
  | { type: 'AbandonOperation'; operationId: string; at: string };

/** An operation's stream before anything is recorded in it: nothing to read. */
export const NEW_OPERATION = { state: { status: 'none' } as OperationState, revision: -1 };

const recorded = (state: OperationState): state is Extract<OperationState, { oId: string }> => state.status !== 'none' && state.status !== 'abandoned';

/** What the sender learnt, in a few words, for the record kept beside a resolution. */
function detailOf(outcome: SenderOutcome): string {
  return 'message' in outcome.data ? outcome.data.message : outcome.data.reason;
}

export const operationDecider: Decider<OperationState, OperationCommand, OperationEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'RequestOperation':
        if (state.status === 'abandoned') throw new ClaimLostError();
        if (state.status !== 'none') throw new ConflictError(`operation ${command.requested.data.operationId} exists already`);
        return [command.requested];
      case 'RecordOutcome': {
        const { outcome } = command;
        if (!recorded(state)) throw new NotFoundError(`No operation ${outcome.data.operationId}`);
        // An operator's resolution is final: a later answer is kept beside it, not in its place.
        if (state.resolved) {
          const { operationId, oId, at } = outcome.data;
          return [{ type: 'OperationAnsweredAfterResolution', data: { operationId, oId, answer: outcome.type, detail: detailOf(outcome), at } }];
        }
        // Otherwise the platform's real answer is recorded even after a node took the operation
        // for dead and marked it unknown: the later word is the one that counts.
        return [outcome];
      }
      case 'CloseAsUnknown': {
        if (state.status !== 'pending') return [];
        const { operationId, reason, at } = command;
        return [{ type: 'OperationOutcomeUnknown', data: { operationId, oId: state.oId, reason, at } }];
      }
      case 'ResolveOutcome': {
        const { operationId, applied, note, by, at } = command;
        if (!recorded(state)) throw new NotFoundError(`No operation ${operationId}`);
        // Only an unknown outcome can be resolved: a known one is the platform's word, not ours.
        if (state.status !== 'unknown') throw new ConflictError(`operation ${operationId} is ${state.status}, not unknown: only an unknown outcome can be resolved`);
        return [{ type: 'OperationResolved', data: { operationId, oId: state.oId, applied, note, by, at } }];
      }
      case 'AbandonOperation':
        return state.status === 'none' ? [{ type: 'OperationAbandoned', data: { operationId: command.operationId, at: command.at } }] : [];
    }
  },

  evolve(state, event) {
    if (isOperationRequested(event)) return { status: 'pending', oId: event.data.oId };
    if (event.type === 'OperationAbandoned') return { status: 'abandoned' };
    if (!recorded(state) || event.type === 'OperationAnsweredAfterResolution') return state;
    return { ...state, status: statusAfter(event), ...(event.type === 'OperationResolved' && { resolved: true as const }) };
  },
};

/**
 * Whether what a caller quotes names this operation: their Idempotency-Key, their X-Request-Id or
 * the operation id, whole or a part of one (the CLI's `--search`, the console's search box).
 */
export function operationMatches(operation: { operationId: string; idempotencyKey?: string | undefined; requestId?: string | undefined }, text: string): boolean {
  return [operation.operationId, operation.idempotencyKey, operation.requestId].some((value) => value?.includes(text));
}
