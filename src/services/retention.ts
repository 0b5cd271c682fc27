// Deletes the streams anonymous traffic leaves behind (DisposableStreamsReadModel) once they have
// been ended for ANONYMOUS_RETENTION_MS: at start and then periodically.
import type { Logger } from '../log.js';
import type { DisposableStreamsReadModel } from '../projections/disposableStreams.js';
import type { EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';

/** Runs at least this often, so that a short retention is honoured closely. */
const MAX_INTERVAL_MS = 10 * 60_000;
const MIN_INTERVAL_MS = 10_000;

export class AnonymousRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly deps: { store: EventStore; disposable: DisposableStreamsReadModel; clock: Clock; log: Logger; retentionMs: number }) {}

  /** Deletes what is due now; answers how many streams were removed. */
  runOnce(): Promise<number> {
    this.running ??= this.deleteDue().finally(() => (this.running = undefined));
    return this.running;
  }

  start(): void {
    const intervalMs = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, this.deps.retentionMs / 4));
    this.timer = setInterval(() => void this.runOnce(), intervalMs);
    this.timer.unref();
    void this.runOnce();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async deleteDue(): Promise<number> {
    const { store, disposable, clock, log, retentionMs } = this.deps;
    const cutoff = new Date(Date.parse(clock.now()) - retentionMs).toISOString();
    const due = disposable.endedBy(cutoff);
    if (due.length === 0) return 0;
    let kept: string[];
    try {
      ({ kept } = await store.deleteStreams(due));
    } catch (error) {
      log.error({ err: error, streams: due.length }, 'could not delete ended anonymous streams; retrying at the next run');
      return 0;
    }
    const deleted = due.filter((stream) => !kept.includes(stream));
    disposable.forget(deleted);
    log.debug({ streams: deleted.length }, 'deleted ended anonymous streams');
    return deleted.length;
  }
}
