import { idempotencyDecider, type IdempotencyState } from '../domain/idempotency.js';
import type { IdempotencyEvent, StreamsDeleted } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';
import type { Projection } from './runner.js';

export interface IdempotencyRecord {
  state: IdempotencyState;
  revision: number;
}

export interface StartedClaim {
  stream: string;
  revision: number;
  state: Extract<IdempotencyState, { kind: 'started' }>;
}

const SWEEP_EVERY = 1000;

/** Idempotency keys by stream, with the stream revision needed to claim one. */
export class IdempotencyReadModel implements Projection {
  readonly name = 'idempotency';
  readonly version = 2;
  readonly handles = ['IdempotentRequestStarted', 'IdempotentOperationBound', 'IdempotentRequestCompleted', 'IdempotentRequestReleased', 'StreamsDeleted'] as const;
  private byStream = new Map<string, IdempotencyRecord>();
  private applied = 0;

  constructor(private readonly now: () => string) {}

  apply(event: RecordedEvent): void {
    if (event.type === 'StreamsDeleted') {
      this.forget((event.data as StreamsDeleted['data']).streams);
      return;
    }
    if (!event.streamName.startsWith('idempotency-')) return;
    const current = this.byStream.get(event.streamName)?.state ?? idempotencyDecider.initialState();
    this.byStream.set(event.streamName, { state: idempotencyDecider.evolve(current, event as unknown as IdempotencyEvent), revision: event.revision });
    if (++this.applied % SWEEP_EVERY === 0) this.sweep();
  }

  snapshotState(): { byStream: Map<string, IdempotencyRecord>; applied: number } {
    return { byStream: this.byStream, applied: this.applied };
  }

  restoreState(state: ReturnType<IdempotencyReadModel['snapshotState']>): boolean {
    ({ byStream: this.byStream, applied: this.applied } = state);
    return true;
  }

  get(stream: string): IdempotencyRecord | undefined {
    return this.byStream.get(stream);
  }

  /** Claims `node` holds in the started state (at its start: the ones an earlier run left). */
  startedBy(node: string): StartedClaim[] {
    const found: StartedClaim[] = [];
    for (const [stream, { state, revision }] of this.byStream) {
      if (state.kind === 'started' && state.node === node) found.push({ stream, revision, state });
    }
    return found;
  }

  /** The streams were deleted (their keys had expired). */
  forget(streams: readonly string[]): void {
    for (const stream of streams) this.byStream.delete(stream);
  }

  /** Free and expired keys only cost memory: forget them (their stream revision is re-read on reuse). */
  private sweep(): void {
    const now = this.now();
    for (const [stream, { state }] of this.byStream) {
      if (state.kind === 'free' || state.expires <= now) this.byStream.delete(stream);
    }
  }
}
