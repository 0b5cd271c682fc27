// Deletes the streams nothing needs any more (DisposableStreamsReadModel): what anonymous traffic
// leaves behind once it has ended for ANONYMOUS_RETENTION_MS, and Idempotency-Key streams once the
// key has expired (IDEMPOTENCY_TTL_HOURS): at start and then periodically. One node deletes at a
// time (the one `leads` names, e.g. the live node with the least NODE_ID); the others only forget
// what is due in their read models, as the deleting node does once it has deleted.
//
// Before each deletion the deleting node records which streams go (StreamsDeleted, a batch at a
// time), and the read models that keep any of them fold it: a read-model snapshot taken while one
// of those streams was still being written then ends, once the log is read on from it, where a
// replay of the shortened log ends, however old the snapshot is.
import { type StreamsDeleted, streams as streamNames } from '../domain/events.js';
import type { Logger } from '../log.js';
import { WorkContext } from '../system/workContext.js';
import type { DisposableStreamsReadModel } from '../projections/disposableStreams.js';
import type { EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import { stamped } from './commandHandler.js';
import type { ClockReading } from './logClock.js';

/** Runs at least this often, so that a short retention is honoured closely. */
const MAX_INTERVAL_MS = 10 * 60_000;
const MIN_INTERVAL_MS = 1000;
/** Streams named by one StreamsDeleted event at most (and deleted after it). */
const STREAMS_PER_RECORD = 1000;

export class StreamRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /**
   * Streams recorded as deleted and not deleted: a deletion kept them (one held the newest event:
   * the log's head never moves back) or failed after the record. The record made the read models
   * forget them, so this node deletes them again.
   */
  private readonly keptBefore = new Set<string>();
  /** Deletions are the node's own work: the record of one names the node. */
  private readonly work: WorkContext;

  constructor(
    private readonly deps: {
      store: Pick<EventStore, 'append' | 'deleteStreams'>;
      /** The node that records a deletion (StreamsDeleted). */
      nodeId: string;
      disposable: Pick<DisposableStreamsReadModel, 'dueBy' | 'forget'>;
      clock: Clock;
      /** A node whose clock is off the log's deletes nothing: what is due is a judgement of time. */
      clockReading?: () => Pick<ClockReading, 'trusted'>;
      /** Whether this node is the one that deletes now (default: it is). */
      leads?: () => boolean;
      log: Logger;
      retentionMs: number;
      /** How long a key lives: the runs are spaced for the shorter of the two. */
      keyTtlMs?: number;
      /** Told of the Idempotency-Key streams deleted (their read model forgets them). */
      onKeysDeleted?: (streams: readonly string[]) => void;
    },
  ) {
    this.work = WorkContext.ofNode(deps.nodeId);
  }

  /** Deletes (or, on a node that does not lead, forgets) what is due now; answers how many streams. */
  runOnce(): Promise<number> {
    this.running ??= this.deleteDue().finally(() => (this.running = undefined));
    return this.running;
  }

  start(): void {
    const shortest = Math.min(this.deps.retentionMs, this.deps.keyTtlMs ?? Infinity);
    const intervalMs = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, shortest / 4));
    this.timer = setInterval(() => void this.runOnce(), intervalMs);
    this.timer.unref();
    void this.runOnce();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async deleteDue(): Promise<number> {
    const { store, disposable, clock, clockReading, log, retentionMs } = this.deps;
    if (clockReading && !clockReading().trusted) return 0;
    const due = [...new Set([...disposable.dueBy(clock.now(), retentionMs), ...this.keptBefore])];
    if (due.length === 0) return 0;
    const kept: string[] = [];
    let recordedOnly: string[] = [];
    let done = due.length;
    if (this.deps.leads?.() ?? true) {
      done = 0;
      try {
        for (; done < due.length; done += STREAMS_PER_RECORD) {
          const batch = due.slice(done, done + STREAMS_PER_RECORD);
          const record: StreamsDeleted = { type: 'StreamsDeleted', data: { streams: batch, node: this.deps.nodeId, at: clock.now() } };
          await store.append(streamNames.retention(), stamped([record], this.work.metadataFor(streamNames.retention())));
          recordedOnly = batch;
          kept.push(...(await store.deleteStreams(batch)).kept);
          recordedOnly = [];
        }
      } catch (error) {
        log.error({ err: error, streams: due.length - done }, 'could not delete streams nothing needs any more; retrying at the next run');
        for (const stream of recordedOnly) this.keptBefore.add(stream);
        if (done === 0) return 0;
      }
    }
    const deleted = due.slice(0, done).filter((stream) => !kept.includes(stream));
    for (const stream of deleted) this.keptBefore.delete(stream);
    for (const stream of kept) this.keptBefore.add(stream);
    disposable.forget(deleted);
    this.deps.onKeysDeleted?.(deleted.filter((stream) => stream.startsWith('idempotency-')));
    log.debug({ streams: deleted.length }, 'deleted streams nothing needs any more');
    return deleted.length;
  }
}
