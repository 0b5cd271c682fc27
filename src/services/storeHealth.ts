// Whether the event store takes appends. Reads can succeed while writes fail (disk full, a
// read-only file system, a store that lost its quorum), and a node that cannot record anything
// should leave the load balancer: /readyz asks here.
import { storeFailureMessage } from '../domain/errors.js';
import { streams } from '../domain/events.js';
import { storeOutageDecider } from '../domain/storeOutage.js';
import type { EventStore } from '../store/port.js';
import type { AppendObserver } from '../store/writeHealth.js';
import type { Clock } from '../system/clock.js';
import { WorkContext } from '../system/workContext.js';
import { handleCommand } from './commandHandler.js';

export interface AppendFailure {
  /** When the first append of this run of failures failed. */
  since: string;
  /** The latest failure's message. */
  message: string;
}

export class StoreWriteHealth implements AppendObserver {
  private failing: AppendFailure | undefined;
  private probing: Promise<void> | undefined;
  /** A probe is the node's own work, whichever request asked. */
  private readonly work: WorkContext;

  constructor(
    private readonly nodeId: string,
    private readonly clock: Clock,
  ) {
    this.work = WorkContext.ofNode(nodeId);
  }

  /** Set while the latest append failed because of the store. */
  get failure(): AppendFailure | undefined {
    return this.failing;
  }

  appendSucceeded(): void {
    this.failing = undefined;
  }

  /** An append failed because of the store (isStoreFailure). */
  appendFailed(error: unknown): void {
    this.failing = { since: this.failing?.since ?? this.clock.now(), message: storeFailureMessage(error) };
  }

  /**
   * While appends fail: tries one append of its own, so that a node the load balancer took out
   * (and so gets no writes) still finds out the store is back. Only a probe that succeeds leaves
   * an event, so each outage leaves one StoreWritesRecovered in the log. `store` must report to
   * this object (instrumentedStore), which clears the failure when the probe succeeds.
   */
  probe(store: EventStore): Promise<void> {
    const failing = this.failing;
    if (!failing) return Promise.resolve();
    const command = { type: 'RecordRecovery', node: this.nodeId, failedSince: failing.since, at: this.clock.now() } as const;
    this.probing ??= handleCommand(this.work, store, streams.store(this.nodeId), storeOutageDecider, command)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.probing = undefined));
    return this.probing;
  }
}
