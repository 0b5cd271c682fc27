// Claims an Idempotency-Key for one execution, binds it to the platform operation the request
// sends, and keeps the answer. Every step is an append with an expected revision on the key's
// stream, so two nodes receiving the same key cannot both run it, and a request whose claim was
// taken over (its process presumed dead) cannot send anything afterwards.
import { createHash } from 'node:crypto';
import { fold } from '../domain/decider.js';
import { ConcurrencyError, ConflictError } from '../domain/errors.js';
import { streams, type IdempotencyEvent } from '../domain/events.js';
import { idempotencyDecider, judge, type IdempotencyState, type OperationView, type Verdict } from '../domain/idempotency.js';
import type { IdempotencyReadModel } from '../projections/idempotency.js';
import type { OperationsReadModel } from '../projections/operations.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';

export interface Claim {
  stream: string;
  revision: number;
  appId: string;
  requestHash: string;
}

export type Decision = Exclude<Verdict, { action: 'execute' }> | { action: 'execute'; claim: Claim };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with object keys sorted, so that key order does not make two equal bodies differ. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The claim was taken over or released while the request ran: it must not send anything now. */
export class ClaimLostError extends ConflictError {
  constructor() {
    super('Idempotency-Key: this request lost its claim on the key to a retry; nothing was sent');
  }
}

export class IdempotencyService {
  constructor(
    private readonly deps: {
      store: EventStore;
      runner: ProjectionRunner;
      model: IdempotencyReadModel;
      operations: OperationsReadModel;
      clock: Clock;
      ttlMs: number;
      /** A claim older than this belongs to a request that can no longer be running. */
      staleMs: number;
      nodeId: string;
    },
  ) {}

  static requestHash(method: string, path: string, body: unknown): string {
    return sha256(`${method} ${path} ${canonicalJson(body)}`);
  }

  async begin(appId: string, key: string, requestHash: string): Promise<Decision> {
    const { store, runner, ttlMs, nodeId, clock } = this.deps;
    const stream = streams.idempotency(appId, sha256(key).slice(0, 40));
    let { state, revision } = this.known(stream);
    if (state.kind === 'started' && this.judge(state, requestHash).action === 'execute') {
      // Taking over a dead request's claim: first be sure the read models hold everything it
      // recorded (an operation bound just before it died must be answered, not sent again).
      await runner.waitFor(await store.headPosition());
      ({ state, revision } = this.known(stream));
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const verdict = this.judge(state, requestHash);
      if (verdict.action !== 'execute') return verdict;
      const now = clock.now();
      const expires = new Date(Date.parse(now) + ttlMs).toISOString();
      try {
        const started: IdempotencyEvent = { type: 'IdempotentRequestStarted', data: { appId, requestHash, at: now, expires, node: nodeId } };
        const { nextExpectedRevision } = await store.append(stream, [started], { expectedRevision: revision < 0 ? 'no_stream' : revision });
        return { action: 'execute', claim: { stream, revision: nextExpectedRevision, appId, requestHash } };
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        // Someone (maybe another node) moved first: decide again on what the stream says now.
        const events = await store.readStream(stream);
        state = fold(idempotencyDecider, events as unknown as IdempotencyEvent[]);
        revision = events.at(-1)?.revision ?? -1;
      }
    }
    return { action: 'wait' };
  }

  /**
   * Binds the key to the operation the request is about to send. Fails with ClaimLostError when
   * the claim is no longer this request's, so that it sends nothing.
   */
  async bind(claim: Claim, operationId: string): Promise<Claim> {
    const event: IdempotencyEvent = { type: 'IdempotentOperationBound', data: { appId: claim.appId, operationId, at: this.deps.clock.now() } };
    try {
      const { nextExpectedRevision } = await this.deps.store.append(claim.stream, [event], { expectedRevision: claim.revision });
      return { ...claim, revision: nextExpectedRevision };
    } catch (error) {
      if (error instanceof ConcurrencyError) throw new ClaimLostError();
      throw error;
    }
  }

  async complete(claim: Claim, status: number, body: unknown): Promise<void> {
    const now = this.deps.clock.now();
    const expires = new Date(Date.parse(now) + this.deps.ttlMs).toISOString();
    await this.finish(claim, { type: 'IdempotentRequestCompleted', data: { appId: claim.appId, requestHash: claim.requestHash, status, body, at: now, expires } });
  }

  async release(claim: Claim): Promise<void> {
    await this.finish(claim, { type: 'IdempotentRequestReleased', data: { appId: claim.appId, at: this.deps.clock.now() } });
  }

  /**
   * At start: claims this node held when it stopped, whose request sent nothing, are free again
   * (a retry need not wait for them to go stale). Returns how many were released.
   */
  async releaseOrphanedClaims(): Promise<number> {
    const { model, operations, nodeId, clock } = this.deps;
    let released = 0;
    for (const { stream, revision, state } of model.startedBy(nodeId)) {
      if (state.operationId !== undefined && operations.get(state.operationId)) continue;
      const event: IdempotencyEvent = { type: 'IdempotentRequestReleased', data: { appId: state.appId, at: clock.now() } };
      if (await this.appendUnlessMoved(stream, event, revision)) released++;
    }
    return released;
  }

  private known(stream: string): { state: IdempotencyState; revision: number } {
    const known = this.deps.model.get(stream);
    return { state: known?.state ?? idempotencyDecider.initialState(), revision: known?.revision ?? -1 };
  }

  private judge(state: IdempotencyState, requestHash: string): Verdict {
    const now = this.deps.clock.now();
    const staleBefore = new Date(Date.parse(now) - this.deps.staleMs).toISOString();
    return judge(state, requestHash, now, staleBefore, this.view(state));
  }

  private view(state: IdempotencyState): OperationView | undefined {
    if (state.kind === 'free' || state.operationId === undefined) return undefined;
    const record = this.deps.operations.get(state.operationId);
    return record && { status: record.status, resolved: record.resolution !== undefined };
  }

  /** A claim that moved on meanwhile (taken over, answered) is the new owner's: leave it. */
  private async finish(claim: Claim, event: IdempotencyEvent): Promise<void> {
    const position = await this.appendUnlessMoved(claim.stream, event, claim.revision);
    if (position !== undefined) await this.deps.runner.waitFor(position);
  }

  private async appendUnlessMoved(stream: string, event: IdempotencyEvent, revision: number): Promise<number | undefined> {
    try {
      return (await this.deps.store.append(stream, [event], { expectedRevision: revision })).position;
    } catch (error) {
      if (error instanceof ConcurrencyError) return undefined;
      throw error;
    }
  }
}
