// Claims an Idempotency-Key for one execution, binds it to the platform operation the request
// sends, and keeps the answer, through the key's decider: a claim has a name, and only the
// request holding it may bind, answer or free the key. So two nodes receiving the same key cannot
// both run it, and a request whose claim was taken over (its process presumed dead) cannot send
// anything afterwards.
import { hash } from 'node:crypto';
import { streams } from '../domain/events.js';
import { NEW_OPERATION, operationDecider } from '../domain/operation.js';
import { idempotencyDecider, judge, type IdempotencyCommand, type IdempotencyState, type OperationView, type Verdict } from '../domain/idempotency.js';
import type { IdempotencyReadModel } from '../projections/idempotency.js';
import type { OperationsReadModel } from '../projections/operations.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { AlongsideWrite, EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import { newRecordId } from '../system/ids.js';
import { handleCommand, type KnownState } from './commandHandler.js';
import type { WorkContext } from '../system/workContext.js';

export interface Claim {
  /** The request's work: what it records under the claim is stamped with it. */
  work: WorkContext;
  stream: string;
  /** The claim's name in the key's stream. */
  claim: string;
  requestHash: string;
  /** The key's stream as this request last left it: its next step is decided on it, no read needed. */
  known: KnownState<IdempotencyState>;
  /** The key's current use (see IdempotentRequestStarted): what the request writes may be named after it. */
  epoch: string;
}

export type Decision = Exclude<Verdict, { action: 'execute' } | { action: 'abandon' }> | { action: 'execute'; claim: Claim };

/** What the read models say of the operation the key is bound to, as a command carries it. */
function boundOperation(state: IdempotencyState, operations: OperationsReadModel) {
  const operationId = state.kind !== 'free' ? state.operationId : undefined;
  return operationId === undefined ? undefined : { operationId, view: operations.view(operationId) };
}

/** The operation's intent is in the log (not merely abandoned, nor unrecorded). */
const intentRecorded = (view: OperationView | undefined) => typeof view === 'object';

const sha256 = (text: string) => hash('sha256', text, 'hex');

/** JSON with object keys sorted, so that key order does not make two equal bodies differ. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export class IdempotencyService {
  constructor(
    private readonly deps: {
      store: EventStore;
      runner: ProjectionRunner;
      model: IdempotencyReadModel;
      operations: OperationsReadModel;
      clock: Clock;
      /** NODE_IDs with a live instance, as this node's heartbeats see them. */
      liveNodes: () => ReadonlySet<string>;
      ttlMs: number;
      /** A claim older than this belongs to a request that can no longer be running. */
      staleMs: number;
      nodeId: string;
    },
  ) {}

  static requestHash(method: string, path: string, body: unknown): string {
    return sha256(`${method} ${path} ${canonicalJson(body)}`);
  }

  async begin(work: WorkContext, appId: string, key: string, requestHash: string): Promise<Decision> {
    const { store, runner, nodeId, operations } = this.deps;
    const stream = streams.idempotency(appId, sha256(key).slice(0, 40));
    let known = this.known(stream);
    // At most: a round that finds a dead request's operation to abandon, and the round that runs.
    for (let round = 0; round < 2; round++) {
      const claim = newRecordId();
      const at = this.deps.clock.now();
      const { events, state, revision } = await this.handle(work, stream, known, {
        type: 'StartRequest',
        appId,
        requestHash,
        claim,
        node: nodeId,
        at,
        expires: this.expiresAfter(at),
        staleBefore: this.staleBefore(at),
        liveNodes: [...this.deps.liveNodes()],
        operation: boundOperation(known.state, operations),
      });
      if (events.length > 0) {
        const epoch = state.kind === 'started' ? state.epoch : claim;
        return { action: 'execute', claim: { work, stream, claim, requestHash, known: { state, revision }, epoch } };
      }
      const verdict = this.judge(state, requestHash);
      if (verdict.action !== 'abandon') return verdict.action === 'execute' ? { action: 'wait' } : verdict;
      // First be sure the read models hold everything recorded (an operation recorded just before
      // its request died must be answered, not sent again); only then rule it out for good.
      await runner.waitFor(await store.headPosition());
      if (!intentRecorded(operations.view(verdict.operationId))) await this.abandon(work, verdict.operationId);
      known = { state, revision };
    }
    // Only a claim turning stale in the instant since it was judged gets here: it is not ours.
    return { action: 'wait' };
  }

  /**
   * Binds the key to the operation the request is about to send. Fails with ClaimLostError when
   * the claim is no longer this request's, so that it sends nothing (and so does the operation's
   * intent append, should a retry abandon the operation after this bind).
   */
  async bind(claim: Claim, operationId: string): Promise<Claim> {
    const { state, revision } = await this.handle(claim.work, claim.stream, claim.known, { type: 'BindOperation', claim: claim.claim, operationId, at: this.deps.clock.now() });
    return { ...claim, known: { state, revision } };
  }

  /**
   * What a write of this request carries so that it lands only while the request holds its claim;
   * with `answer`, the answer is recorded in the same append (the write and the key's answer are
   * then one: no retry can find the write done and the key unanswered).
   */
  fence(claim: Claim, answer?: { status: number; body: unknown }): AlongsideWrite {
    const at = this.deps.clock.now();
    const events = answer ? idempotencyDecider.decide({ type: 'CompleteRequest', claim: claim.claim, ...answer, at, expires: this.expiresAfter(at) }, claim.known.state) : [];
    return { streamName: claim.stream, expectedRevision: claim.known.revision < 0 ? 'no_stream' : claim.known.revision, events };
  }

  async complete(claim: Claim, status: number, body: unknown): Promise<void> {
    const at = this.deps.clock.now();
    await this.recordClaimEnd(claim, { type: 'CompleteRequest', claim: claim.claim, status, body, at, expires: this.expiresAfter(at) });
  }

  async release(claim: Claim): Promise<void> {
    await this.recordClaimEnd(claim, { type: 'ReleaseRequest', claim: claim.claim, at: this.deps.clock.now() });
  }

  /**
   * At start: claims this node held when it stopped, whose request sent nothing, are free again
   * (a retry need not wait for them to go stale). Returns how many were released.
   */
  async releaseOrphanedClaims(work: WorkContext): Promise<number> {
    const { model, operations, nodeId, clock } = this.deps;
    let released = 0;
    for (const { stream, state } of model.startedBy(nodeId)) {
      if (state.operationId !== undefined) {
        // Only a dead request's operation stays unrecorded for good; a live process that shares
        // this NODE_ID by mistake must not record it after its key was freed.
        if (!intentRecorded(operations.view(state.operationId))) await this.abandon(work, state.operationId);
        if (intentRecorded(operations.view(state.operationId))) continue;
      }
      const { events } = await this.handle(work, stream, this.known(stream), { type: 'ReleaseRequest', claim: state.claim, at: clock.now() });
      if (events.length > 0) released++;
    }
    return released;
  }

  /**
   * The claim's request bound the key to this operation and recorded nothing of it yet: if it is
   * not dead but only stalled, it must not record or send it after this retry runs. Abandoning
   * creates the operation's stream, so its own intent append (which expects no stream) fails.
   * When the intent got there first, the read models are brought up to it, and it is answered.
   */
  private async abandon(work: WorkContext, operationId: string): Promise<void> {
    const { store, runner, clock } = this.deps;
    const command = { type: 'AbandonOperation', operationId, at: clock.now() } as const;
    const { position } = await handleCommand(work, store, streams.operation(operationId), operationDecider, command, { known: NEW_OPERATION });
    if (position !== undefined) await runner.waitFor(position);
  }

  private handle(work: WorkContext, stream: string, known: KnownState<IdempotencyState>, command: IdempotencyCommand) {
    return handleCommand(work, this.deps.store, stream, idempotencyDecider, command, { known });
  }

  /** Records the answer (or the release) and waits until the read models have it. */
  private async recordClaimEnd(claim: Claim, command: IdempotencyCommand): Promise<void> {
    const { position } = await this.handle(claim.work, claim.stream, claim.known, command);
    if (position !== undefined) await this.deps.runner.waitFor(position);
  }

  private known(stream: string): KnownState<IdempotencyState> {
    const known = this.deps.model.get(stream);
    return { state: known?.state ?? idempotencyDecider.initialState(), revision: known?.revision ?? -1 };
  }

  private judge(state: IdempotencyState, requestHash: string): Verdict {
    const now = this.deps.clock.now();
    const operation = state.kind !== 'free' && state.operationId !== undefined ? this.deps.operations.view(state.operationId) : undefined;
    return judge(state, requestHash, { now, staleBefore: this.staleBefore(now), liveNodes: [...this.deps.liveNodes()] }, operation);
  }

  private expiresAfter(now: string): string {
    return new Date(Date.parse(now) + this.deps.ttlMs).toISOString();
  }

  private staleBefore(now: string): string {
    return new Date(Date.parse(now) - this.deps.staleMs).toISOString();
  }
}
