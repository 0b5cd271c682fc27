// Idempotency-Key semantics for admin writes: the same key from the same app with the same
// request answers the first answer again; with a different request it is refused.
import type { Decider } from './decider.js';
import { IdempotencyKeyReusedError } from './errors.js';
import type { IdempotencyEvent } from './events.js';

export type IdempotencyState =
  | { kind: 'free' }
  | { kind: 'started'; requestHash: string; at: string; expires: string }
  | { kind: 'completed'; requestHash: string; status: number; body: unknown; expires: string };

/** What to do with a request that carries a key in this state. */
export type Verdict = { action: 'execute' } | { action: 'replay'; status: number; body: unknown } | { action: 'wait' };

/**
 * `staleBefore`: a claim older than this was left by a node that died mid-request; it may be
 * taken over. Expired records count as free.
 */
export function judge(state: IdempotencyState, requestHash: string, now: string, staleBefore: string): Verdict {
  if (state.kind === 'free' || state.expires <= now) return { action: 'execute' };
  if (state.requestHash !== requestHash) {
    throw new IdempotencyKeyReusedError('Idempotency-Key: already used with a different request; use a new key for a new request');
  }
  if (state.kind === 'completed') return { action: 'replay', status: state.status, body: state.body };
  return state.at < staleBefore ? { action: 'execute' } : { action: 'wait' };
}

export const idempotencyDecider: Pick<Decider<IdempotencyState, never, IdempotencyEvent>, 'initialState' | 'evolve'> = {
  initialState: () => ({ kind: 'free' }),
  evolve(_state, event) {
    switch (event.type) {
      case 'IdempotentRequestStarted':
        return { kind: 'started', requestHash: event.data.requestHash, at: event.data.at, expires: event.data.expires };
      case 'IdempotentRequestCompleted':
        return { kind: 'completed', requestHash: event.data.requestHash, status: event.data.status, body: event.data.body, expires: event.data.expires };
      case 'IdempotentRequestReleased':
        return { kind: 'free' };
    }
  },
};
