// Folds the log into the read models: catch up page by page from the start, then follow the
// store's live subscription. Handlers call waitFor(position) after an append so that the answer
// they read back includes their own write (docs/architecture.md, "Read your writes").
//
// Nothing stops the runner for good. The subscription resumes by itself after an interruption
// (port.ts); the runner only hears of it. A read model that throws on an event is recorded as
// failed (the service is then not ready: its answers may be wrong) while the other read models
// apply the event and the runner goes on, so one bad event cannot freeze every read model.
import { Subject } from 'rxjs';
import type { DomainEventType } from '../domain/events.js';
import { StoreUnavailableError } from '../domain/errors.js';
import { OutOfOrderEventError, type EventStore, type RecordedEvent, type Subscription } from '../store/port.js';

export interface Projection {
  readonly name: string;
  /**
   * The version of what apply() builds and of the state snapshotState() returns. Bump it by one in
   * the change that makes a state saved by the code before it differ from what the new code builds
   * from the same log: a new event type handled, a field kept, dropped or renamed, an event folded
   * differently (a fix included), another shape of snapshot state. A snapshot holding another
   * version of a read model is not restored into it: that read model alone is rebuilt from the log
   * (src/projections/snapshots.ts). A change that only adds a query needs no bump.
   */
  readonly version: number;
  /** The event types it folds: the runner hands it only those. */
  readonly handles: readonly DomainEventType[];
  apply(event: RecordedEvent): void;
  /**
   * Everything apply() has built, as v8.serialize takes it (plain objects, arrays, Maps, Sets,
   * typed arrays; no class instance, no function). It may share objects with the live state: it
   * is serialised before the next event is applied.
   */
  snapshotState(): unknown;
  /**
   * Takes over a state snapshotState() returned at this version, in place of its own (in this
   * instance: other read models and services hold it). Answers false, keeping nothing, when the
   * state was made under settings that would have built it differently: it is then rebuilt.
   */
  restoreState(state: unknown): boolean;
  /**
   * For read models with much to encode in a snapshot (SavedMaps): encodes up to `entries` of it
   * ahead, a slice per turn of the event loop, so that the snapshot itself holds the loop briefly;
   * answers whether any is left.
   */
  encodeAhead?(entries: number): boolean;
}

export interface CatchUpProgress {
  position: number;
  events: number;
}

/** A read model threw on an event. */
export interface ProjectionFailure {
  readModel: string;
  event: RecordedEvent;
  error: Error;
}

export interface RunnerObserver {
  /** A read model threw on an event; the first failure of each read model is kept in `failures`. */
  projectionFailed?(failure: ProjectionFailure): void;
  /** The live subscription reported trouble (an interruption it resumes from). */
  subscriptionTrouble?(error: Error): void;
}

export function describeFailure({ readModel, event, error }: ProjectionFailure): string {
  return `Read model "${readModel}" failed on event #${event.position} (${event.type} in ${event.streamName}@${event.revision}): ${error.message}`;
}

/**
 * Events per catch-up read. A page is alive while it is applied, so each young-generation GC in
 * that time copies it (and promotes some of it): smaller pages copy less, and cost a few more reads.
 */
export const CATCH_UP_PAGE = 1000;

/** How a start begins: the read models restored from a snapshot, each at the position it stands for. */
export interface StartOptions {
  onProgress?: (progress: CatchUpProgress) => void;
  /** Read models restored from a snapshot and the position each had applied; the others start from the log's start. */
  restored?: ReadonlyMap<Projection, number>;
}

export class ProjectionRunner {
  /** Every event once the read models have applied it, in log order (the realtime hub listens). */
  readonly applied$ = new Subject<RecordedEvent>();
  /** The read models, in apply order. */
  readonly projections: readonly Projection[];
  private current = 0;
  private last: RecordedEvent | undefined;
  private subscription: Subscription | undefined;
  private waiters: Array<{ position: number; resolve(): void }> = [];
  private readonly failed = new Map<string, ProjectionFailure>();
  /** The read models that fold each event type, in apply order. */
  private readonly byType = new Map<string, Projection[]>();

  constructor(
    private readonly store: EventStore,
    projections: readonly Projection[],
    private readonly observer: RunnerObserver = {},
  ) {
    this.projections = projections;
    indexByType(projections, this.byType);
  }

  get position(): number {
    return this.current;
  }

  /** The event at `position` when this runner applied it (undefined when it started past it). */
  get lastApplied(): RecordedEvent | undefined {
    return this.last?.position === this.current ? this.last : undefined;
  }

  /** The first failure of each read model that threw on an event, oldest first. */
  get failures(): ProjectionFailure[] {
    return [...this.failed.values()];
  }

  /**
   * Catches up with the whole log, then follows it live. Resolves once caught up. Read models
   * restored from a snapshot skip what they have applied: the log is read from the least of their
   * positions (from its start when one is rebuilt), and up to the greatest an event goes only to
   * the read models behind it.
   */
  async start({ onProgress, restored = new Map() }: StartOptions = {}): Promise<void> {
    const from = (projection: Projection) => restored.get(projection) ?? 0;
    const ahead = Math.max(0, ...this.projections.map(from));
    this.current = Math.min(ahead, ...this.projections.map(from));
    const behind = new Map<string, Projection[]>();
    indexByType(
      this.projections.filter((projection) => from(projection) < ahead),
      behind,
    );
    let events = 0;
    for (;;) {
      const page = await this.store.readAll({ after: this.current, limit: CATCH_UP_PAGE });
      for (const event of page) {
        if (event.position <= ahead) this.applyBehind(event, behind, from);
        else this.apply(event);
      }
      events += page.length;
      onProgress?.({ position: this.current, events });
      if (page.length < CATCH_UP_PAGE) break;
      // An embedded store reads synchronously: let the node answer its liveness probe meanwhile.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // The newest restored events may have been deleted since (retention): the live part starts past them.
    if (this.current < ahead) this.current = ahead;
    this.subscription = this.store.subscribeToAll({
      after: this.current,
      onEvent: (event) => this.apply(event),
      onError: (error) => this.observer.subscriptionTrouble?.(error),
    });
  }

  /** Resolves once every read model has applied the event at `position` (or a later one). */
  waitFor(position: number, timeoutMs = 5000): Promise<void> {
    if (this.current >= position) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        position,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        // The store's log did not become readable in time: store trouble (503, retried with the
        // same Idempotency-Key), not a fault of the request.
        reject(new StoreUnavailableError(new Error(`Read models did not reach position ${position} within ${timeoutMs} ms (at ${this.current})`)));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /**
   * For a request whose change is already recorded: waits like waitFor, but a lagging read model
   * does not turn it into a failure, which its caller would retry and so record the change twice.
   */
  async waitForRecorded(position: number | undefined): Promise<void> {
    if (position !== undefined) await this.waitFor(position).catch(() => undefined);
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.applied$.complete();
  }

  private apply(event: RecordedEvent): void {
    // The store guarantees it (port.ts); applying an event twice would corrupt the read models.
    if (event.position <= this.current) throw new OutOfOrderEventError(event.position, this.current);
    const projections = this.byType.get(event.type);
    if (projections) for (let i = 0; i < projections.length; i++) this.applyTo(projections[i]!, event);
    this.current = event.position;
    this.last = event;
    // Nobody listens while the node catches up at start: skip the emission's own work then.
    if (this.applied$.observed) this.applied$.next(event);
    if (this.waiters.length > 0) this.release();
  }

  /** Before the greatest restored position: only to the read models that have not applied it. */
  private applyBehind(event: RecordedEvent, behind: ReadonlyMap<string, Projection[]>, from: (projection: Projection) => number): void {
    if (event.position <= this.current) throw new OutOfOrderEventError(event.position, this.current);
    for (const projection of behind.get(event.type) ?? []) if (from(projection) < event.position) this.applyTo(projection, event);
    this.current = event.position;
    this.last = event;
  }

  private applyTo(projection: Projection, event: RecordedEvent): void {
    try {
      projection.apply(event);
    } catch (error) {
      this.projectionFailed({ readModel: projection.name, event, error: error as Error });
    }
  }

  private projectionFailed(failure: ProjectionFailure): void {
    if (!this.failed.has(failure.readModel)) this.failed.set(failure.readModel, failure);
    this.observer.projectionFailed?.(failure);
  }

  private release(): void {
    const ready = this.waiters.filter((w) => w.position <= this.current);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > this.current);
    for (const waiter of ready) waiter.resolve();
  }
}

function indexByType(projections: readonly Projection[], byType: Map<string, Projection[]>): void {
  for (const projection of projections) {
    for (const type of projection.handles) byType.set(type, [...(byType.get(type) ?? []), projection]);
  }
}
