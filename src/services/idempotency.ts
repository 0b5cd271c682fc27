// Claims an Idempotency-Key for one execution, and keeps the answer. The claim is an append with
// an expected revision, so two nodes receiving the same key at once cannot both execute.
import { createHash } from 'node:crypto';
import { fold } from '../domain/decider.js';
import { ConcurrencyError } from '../domain/errors.js';
import { streams, type IdempotencyEvent } from '../domain/events.js';
import { idempotencyDecider, judge, type IdempotencyState, type Verdict } from '../domain/idempotency.js';
import type { IdempotencyReadModel } from '../projections/idempotency.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import type { Clock } from './runtime.js';

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

export class IdempotencyService {
  constructor(
    private readonly deps: { store: EventStore; runner: ProjectionRunner; model: IdempotencyReadModel; clock: Clock; ttlMs: number; staleMs: number },
  ) {}

  static requestHash(method: string, path: string, body: unknown): string {
    return sha256(`${method} ${path} ${canonicalJson(body)}`);
  }

  async begin(appId: string, key: string, requestHash: string): Promise<Decision> {
    const { store, model, clock, ttlMs, staleMs } = this.deps;
    const stream = streams.idempotency(appId, sha256(key).slice(0, 40));
    const known = model.get(stream);
    let state: IdempotencyState = known?.state ?? idempotencyDecider.initialState();
    let revision = known?.revision ?? -1;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = clock.now();
      const verdict = judge(state, requestHash, now, new Date(Date.parse(now) - staleMs).toISOString());
      if (verdict.action !== 'execute') return verdict;
      const expires = new Date(Date.parse(now) + ttlMs).toISOString();
      try {
        const started: IdempotencyEvent = { type: 'IdempotentRequestStarted', data: { appId, requestHash, at: now, expires } };
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

  async complete(claim: Claim, status: number, body: unknown): Promise<void> {
    const now = this.deps.clock.now();
    const expires = new Date(Date.parse(now) + this.deps.ttlMs).toISOString();
    await this.finish(claim, { type: 'IdempotentRequestCompleted', data: { appId: claim.appId, requestHash: claim.requestHash, status, body, at: now, expires } });
  }

  async release(claim: Claim): Promise<void> {
    await this.finish(claim, { type: 'IdempotentRequestReleased', data: { appId: claim.appId, at: this.deps.clock.now() } });
  }

  private async finish(claim: Claim, event: IdempotencyEvent): Promise<void> {
    const { position } = await this.deps.store.append(claim.stream, [event], { expectedRevision: claim.revision });
    await this.deps.runner.waitFor(position);
  }
}
