// Idempotency-Key semantics for admin writes. The same key from the same app with the same request
// answers the first answer again; with a different request it is refused. Once a request has bound
// its key to a platform operation, the key answers for that operation until it expires, whatever
// happened to the process that sent it: a retry never sends the operation again.
import type { Decider } from './decider.js';
import { IdempotencyKeyReusedError } from './errors.js';
import type { IdempotencyEvent } from './events.js';
import type { OperationStatus } from './operation.js';

interface Claimed {
  appId: string;
  requestHash: string;
  expires: string;
  /** The platform operation the request started, once it was about to send it. */
  operationId?: string;
}

export type IdempotencyState =
  | { kind: 'free' }
  | (Claimed & { kind: 'started'; at: string; node?: string })
  | (Claimed & { kind: 'completed'; status: number; body: unknown });

/** What to do with a request that carries a key in this state. */
export type Verdict =
  | { action: 'execute' }
  | { action: 'replay'; status: number; body: unknown }
  /** Answer from what the log says about the operation now (its outcome, or that it is unknown). */
  | { action: 'operation'; operationId: string }
  | { action: 'wait' };

/** What the log says about the bound operation; undefined when its intent was never recorded. */
export interface OperationView {
  status: OperationStatus;
  resolved: boolean;
}

/**
 * `staleBefore`: a claim started before this instant belongs to a request that can no longer be
 * running (requests end within their timeouts). Expired records count as free.
 */
export function judge(state: IdempotencyState, requestHash: string, now: string, staleBefore: string, operation: OperationView | undefined): Verdict {
  if (state.kind === 'free' || state.expires <= now) return { action: 'execute' };
  if (state.requestHash !== requestHash) {
    throw new IdempotencyKeyReusedError('Idempotency-Key: already used with a different request; use a new key for a new request');
  }
  const { operationId } = state;
  if (state.kind === 'completed') {
    // An answer that said the outcome was unknown is given again from what the log knows now
    // (a later answer, a restart that closed it, an operator's resolution).
    const superseded = operationId !== undefined && operation !== undefined && (operation.resolved || state.status >= 500);
    return superseded ? { action: 'operation', operationId } : { action: 'replay', status: state.status, body: state.body };
  }
  const stale = state.at < staleBefore;
  if (operationId !== undefined && operation !== undefined) {
    return operation.status === 'pending' && !stale ? { action: 'wait' } : { action: 'operation', operationId };
  }
  // Nothing was sent (an operation's intent is recorded before it is sent): once the request
  // that holds the claim cannot be running any more, the key may run again.
  return stale ? { action: 'execute' } : { action: 'wait' };
}

export const idempotencyDecider: Pick<Decider<IdempotencyState, never, IdempotencyEvent>, 'initialState' | 'evolve'> = {
  initialState: () => ({ kind: 'free' }),
  evolve(state, event) {
    switch (event.type) {
      case 'IdempotentRequestStarted': {
        const { appId, requestHash, at, expires, node } = event.data;
        return { kind: 'started', appId, requestHash, at, expires, ...(node !== undefined && { node }) };
      }
      case 'IdempotentOperationBound':
        return state.kind === 'free' ? state : { ...state, operationId: event.data.operationId };
      case 'IdempotentRequestCompleted': {
        const { appId, requestHash, status, body, expires } = event.data;
        const operationId = state.kind === 'free' ? undefined : state.operationId;
        return { kind: 'completed', appId, requestHash, status, body, expires, ...(operationId !== undefined && { operationId }) };
      }
      case 'IdempotentRequestReleased':
        return { kind: 'free' };
    }
  },
};
