// Idempotency-Key semantics for admin writes. The same key from the same app with the same request
// answers the first answer again; with a different request it is refused. Once a request has bound
// its key to a platform operation, the key answers for that operation until it expires, whatever
// happened to the process that sent it: a retry never sends the operation again.
import type { Decider } from './decider.js';
import { ConflictError, IdempotencyKeyReusedError } from './errors.js';
import type { IdempotencyEvent } from './events.js';
import { unnamedClaim } from './eventVersions.js';
import type { OperationStatus } from './operation.js';

/** The claim was taken over or released while the request ran: it must not send anything now. */
export class ClaimLostError extends ConflictError {
  constructor() {
    super('Idempotency-Key: this request lost its claim on the key to a retry (it stalled past the claim window); nothing was written or sent');
  }
}

interface Claimed {
  appId: string;
  requestHash: string;
  expires: string;
  /** The platform operation the request started, once it was about to send it. */
  operationId?: string;
}

/** The key's current use, kept through a release: its next claim for the same request goes on with it. */
interface Use {
  epoch: string;
  requestHash: string;
  expires: string;
}

export type IdempotencyState =
  | { kind: 'free'; last?: Use }
  | (Claimed & { kind: 'started'; at: string; node?: string; claim: string; epoch: string })
  | (Claimed & { kind: 'completed'; status: number; body: unknown });

/** What to do with a request that carries a key in this state. */
export type Verdict =
  | { action: 'execute' }
  | { action: 'replay'; status: number; body: unknown }
  /** Answer from what the log says about the operation now (its outcome, or that it is unknown). */
  | { action: 'operation'; operationId: string }
  /**
   * The claim is stale and bound to an operation the log does not show: the key may run again only
   * once that operation can never be recorded (its request may be stalled rather than dead).
   */
  | { action: 'abandon'; operationId: string }
  | { action: 'wait' };

/**
 * What the log says about the bound operation: its status once its intent is recorded,
 * 'abandoned' when a takeover made sure it never will be, undefined when nothing is recorded.
 */
export type OperationView = { status: OperationStatus; resolved: boolean } | 'abandoned';

/** When a claim is judged: the instant it is judged at, and what is known of the nodes. */
export interface JudgedAt {
  now: string;
  /**
   * A claim the log recorded before this instant belongs to a request that has stalled or died
   * (requests end within their timeouts).
   */
  staleBefore: string;
  /** NODE_IDs with a live instance (their heartbeats move): a claim of theirs may still be running. */
  liveNodes: readonly string[];
}

/** Expired records count as free. */
export function judge(state: IdempotencyState, requestHash: string, at: JudgedAt, operation: OperationView | undefined): Verdict {
  const { now, staleBefore } = at;
  if (state.kind === 'free' || state.expires <= now) return { action: 'execute' };
  if (state.requestHash !== requestHash) {
    throw new IdempotencyKeyReusedError('Idempotency-Key: already used with a different request; use a new key for a new request');
  }
  const { operationId } = state;
  if (state.kind === 'completed') {
    // An answer that said the outcome was unknown is given again from what the log knows now
    // (a later answer, a restart that closed it, an operator's resolution).
    const superseded = operationId !== undefined && typeof operation === 'object' && (operation.resolved || state.status >= 500);
    return superseded ? { action: 'operation', operationId } : { action: 'replay', status: state.status, body: state.body };
  }
  const stale = state.at < staleBefore;
  if (operationId !== undefined && operation !== 'abandoned') {
    if (operation === undefined) return stale ? { action: 'abandon', operationId } : { action: 'wait' };
    // A request that sent its operation and is still running answers for it itself: a retry
    // waits rather than say "unknown" of a write that may yet be answered. Only once its node is
    // gone (or the operation is closed as unknown) does the log's answer stand in for it.
    const running = !stale || (state.node !== undefined && at.liveNodes.includes(state.node));
    return operation.status === 'pending' && running ? { action: 'wait' } : { action: 'operation', operationId };
  }
  // Nothing was sent (an operation's intent is recorded before it is sent): once the request
  // that holds the claim cannot be running any more, the key may run again.
  return stale ? { action: 'execute' } : { action: 'wait' };
}

export type IdempotencyCommand =
  /**
   * Claims the key for a request, when `judge` says it may run now; otherwise records nothing and
   * the caller judges the state it gets back. `operation`: what the log said, when the command
   * was made, of the operation the key was then bound to; judged on a key bound to another one
   * (the stream moved meanwhile), nothing is known of it, which never lets the request run.
   */
  | {
      type: 'StartRequest';
      appId: string;
      requestHash: string;
      claim: string;
      node: string;
      at: string;
      expires: string;
      staleBefore: string;
      liveNodes: readonly string[];
      operation: { operationId: string; view: OperationView | undefined } | undefined;
    }
  /** The request is about to record and send this operation: only while it holds the claim. */
  | { type: 'BindOperation'; claim: string; operationId: string; at: string }
  /** Keeps the answer; a claim that moved on meanwhile (taken over, answered) is left to its new owner. */
  | { type: 'CompleteRequest'; claim: string; status: number; body: unknown; at: string; expires: string }
  /** Frees the key (the request surely changed nothing), unless the claim moved on meanwhile. */
  | { type: 'ReleaseRequest'; claim: string; at: string };

const holds = (state: IdempotencyState, claim: string): state is Extract<IdempotencyState, { kind: 'started' }> => state.kind === 'started' && state.claim === claim;

export const idempotencyDecider: Decider<IdempotencyState, IdempotencyCommand, IdempotencyEvent> = {
  initialState: () => ({ kind: 'free' }),

  decide(command, state) {
    switch (command.type) {
      case 'StartRequest': {
        const { appId, requestHash, claim, node, at, expires, staleBefore, liveNodes } = command;
        const bound = state.kind !== 'free' ? state.operationId : undefined;
        const operation = bound !== undefined && command.operation?.operationId === bound ? command.operation.view : undefined;
        if (judge(state, requestHash, { now: at, staleBefore, liveNodes }, operation).action !== 'execute') return [];
        // Taking over a stale claim of the same request, or claiming again a key the same request
        // released (after a failure that may have written something), goes on with its use.
        const previous = state.kind === 'free' ? state.last : state.kind === 'started' ? state : undefined;
        const epoch = previous && previous.requestHash === requestHash && previous.expires > at ? previous.epoch : claim;
        return [{ type: 'IdempotentRequestStarted', data: { appId, requestHash, at, expires, node, claim, epoch } }];
      }
      case 'BindOperation':
        if (!holds(state, command.claim)) throw new ClaimLostError();
        return [{ type: 'IdempotentOperationBound', data: { appId: state.appId, operationId: command.operationId, at: command.at } }];
      case 'CompleteRequest': {
        if (!holds(state, command.claim)) return [];
        const { status, body, at, expires } = command;
        return [{ type: 'IdempotentRequestCompleted', data: { appId: state.appId, requestHash: state.requestHash, status, body, at, expires } }];
      }
      case 'ReleaseRequest':
        return holds(state, command.claim) ? [{ type: 'IdempotentRequestReleased', data: { appId: state.appId, at: command.at } }] : [];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'IdempotentRequestStarted': {
        const { appId, requestHash, expires, node, epoch } = event.data;
        // A claim's age counts from when the log recorded it (the store's clock at the insert), not
        // from when its node decided it: an append that waited must not make its claim look old.
        const at = event.created ?? event.data.at;
        // Events read from a store are current (eventVersions.ts); one handed over directly may not be.
        const claim = event.data.claim ?? unnamedClaim(node, at);
        return { kind: 'started', appId, requestHash, at, expires, claim, epoch: epoch ?? claim, ...(node !== undefined && { node }) };
      }
      case 'IdempotentOperationBound':
        return state.kind === 'free' ? state : { ...state, operationId: event.data.operationId };
      case 'IdempotentRequestCompleted': {
        const { appId, requestHash, status, body, expires } = event.data;
        const operationId = state.kind === 'free' ? undefined : state.operationId;
        return { kind: 'completed', appId, requestHash, status, body, expires, ...(operationId !== undefined && { operationId }) };
      }
      case 'IdempotentRequestReleased':
        return state.kind === 'started' ? { kind: 'free', last: { epoch: state.epoch, requestHash: state.requestHash, expires: state.expires } } : { kind: 'free' };
    }
  },
};
