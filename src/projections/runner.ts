// Folds the log into the read models: catch up page by page from the start, then follow the
// store's live subscription. Handlers call waitFor(position) after an append so that the answer
// they read back includes their own write (design.md "read your writes").
import { Subject } from 'rxjs';
import type { EventStore, RecordedEvent, Subscription } from '../store/port.js';

export interface Projection {
  readonly name: string;
  apply(event: RecordedEvent): void;
}

export interface CatchUpProgress {
  position: number;
  events: number;
}

const PAGE = 5000;

export class ProjectionRunner {
  /** Every event once the read models have applied it, in log order (the realtime hub listens). */
  readonly applied$ = new Subject<RecordedEvent>();
  private current = 0;
  private subscription: Subscription | undefined;
  private waiters: Array<{ position: number; resolve(): void }> = [];
  private failure: Error | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly projections: readonly Projection[],
  ) {}

  get position(): number {
    return this.current;
  }

  /** Catches up with the whole log, then follows it live. Resolves once caught up. */
  async start(onProgress?: (progress: CatchUpProgress) => void): Promise<void> {
    let events = 0;
    for (;;) {
      const page = await this.store.readAll({ after: this.current, limit: PAGE });
      for (const event of page) this.apply(event);
      events += page.length;
      onProgress?.({ position: this.current, events });
      if (page.length < PAGE) break;
    }
    this.subscription = this.store.subscribeToAll({
      after: this.current,
      onEvent: (event) => this.apply(event),
      onError: (error) => this.fail(error),
    });
  }

  /** Resolves once every read model has applied the event at `position` (or a later one). */
  waitFor(position: number, timeoutMs = 5000): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.current >= position) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { position, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`Read models did not reach position ${position} within ${timeoutMs} ms (at ${this.current})`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.applied$.complete();
  }

  private apply(event: RecordedEvent): void {
    // A subscription may hand over an event the catch-up already applied.
    if (event.position <= this.current) return;
    for (const projection of this.projections) projection.apply(event);
    this.current = event.position;
    this.applied$.next(event);
    if (this.waiters.length > 0) this.release();
  }

  private release(): void {
    const ready = this.waiters.filter((w) => w.position <= this.current);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > this.current);
    for (const waiter of ready) waiter.resolve();
  }

  private fail(error: Error): void {
    this.failure = error;
    this.applied$.error(error);
  }
}
