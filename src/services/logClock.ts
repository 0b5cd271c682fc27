// The one clock every node reads (docs/architecture.md, "Time across nodes"). Every time a node
// writes into the log, and every "now" it compares with a time read from the log, is on the log's
// clock: the store server's own clock where the store has one (PostgreSQL, EventStoreDB), else
// (SQLite, whose nodes share one machine) the clock of the live node that has run longest. A node reads it as
// its own clock less its measured offset, from heartbeats it records in the store. Past
// CLOCK_MAX_OFFSET_MS the node says so (/readyz, a metric) and judges no other node's work.
import { hostname } from 'node:os';
import type { BeatReading, EventStore, NodeBeat } from '../store/port.js';
import { isoClock, type Clock } from '../system/clock.js';
import { newRecordId } from '../system/ids.js';

export interface LogClockOptions {
  store: Pick<EventStore, 'beat'>;
  nodeId: string;
  heartbeatMs: number;
  maxOffsetMs: number;
  /** This process's own clock, ms since the epoch (tests move it). */
  localMs?: () => number;
  /** A monotonic clock for durations measured by this process alone. */
  monotonicMs?: () => number;
}

/** Beats without a moving count after which an instance counts as gone. */
const LEASE_BEATS = 5;
/** Gone instances are forgotten this many beats after they stopped. */
const FORGET_BEATS = 3600;
/** Readings an offset is judged on: the latest ones, so that a clock set right is followed. */
const SAMPLES = 8;
/** Allowance for the time between a heartbeat's clock reading and its write. */
const READ_SLACK_MS = 50;
/** `started` of an instance that has not measured its offset yet: it is nobody's reference. */
const MEASURING = 'measuring';

/**
 * An offset known only within bounds: each reading proves it lies between a low and a high value;
 * the latest readings together prove their intersection. The estimate is the smallest correction
 * they prove (0 when they allow it): two clocks that cannot be told apart are not corrected.
 */
class OffsetBounds {
  private readings: Array<{ low: number; high: number }> = [];

  get known(): boolean {
    return this.readings.length > 0;
  }

  add(low: number, high: number): void {
    this.readings.push({ low, high });
    if (this.readings.length > SAMPLES) this.readings.shift();
    // Readings that no longer overlap mean a clock was set meanwhile: only the latest holds.
    const { low: lo, high: hi } = this.bounds();
    if (lo > hi) this.readings = [{ low, high }];
  }

  estimate(): number {
    const { low, high } = this.bounds();
    return Math.min(Math.max(0, low), high);
  }

  private bounds(): { low: number; high: number } {
    return {
      low: Math.max(...this.readings.map((r) => r.low)),
      high: Math.min(...this.readings.map((r) => r.high)),
    };
  }
}

interface Peer {
  beat: NodeBeat;
  /** Monotonic time at which this process first saw the peer, and last saw its count move. */
  seenAt: number;
  movedAt: number;
  /** What the recent readings prove of (this clock − the peer's clock). */
  offset: OffsetBounds;
}

/** What this node knows of the clocks and of the other nodes, at its last beat. */
export interface ClockReading {
  /** This node's clock minus the log's clock, in ms. */
  offsetMs: number;
  /** Within CLOCK_MAX_OFFSET_MS, and measured at least once. */
  trusted: boolean;
  /** NODE_IDs with a live instance (this node's own included). */
  liveNodes: ReadonlySet<string>;
  /**
   * NODE_IDs this process has seen live and that have no live instance now (killed, frozen, cut
   * off): what they hold is gone, though nothing recorded its end. A node not seen live yet (one
   * that just started) is in neither set.
   */
  stoppedNodes: ReadonlySet<string>;
}

/**
 * One process as its heartbeats show it. `live`: it beat within one and a half intervals (its
 * interval is jittered up to a quarter over); `lapsed`: it stopped beating since, for less than
 * the lease (stopped, frozen, cut off, or killed a moment ago); `gone`: past the lease, as every
 * node judges it (its work may be taken over). `since`: when it started (live), or its last beat.
 */
export interface NodeLiveness {
  node: string;
  instance: string;
  state: 'live' | 'lapsed' | 'gone';
  /** On the log's clock, ISO-8601 UTC. */
  since: string;
  lastBeat: string;
  /** This process. */
  self: boolean;
}

/** Another live process holds this NODE_ID: the two would act on each other's work. */
export class DuplicateNodeError extends Error {}

export class LogClock implements Clock {
  readonly instance = `${hostname()}-${process.pid}-${newRecordId()}`;
  private readonly localMs: () => number;
  private readonly monotonicMs: () => number;
  private readonly peers = new Map<string, Peer>();
  /** The NODE_IDs of every peer seen live in this process's life. */
  private readonly seenLive = new Set<string>();
  private offsetMs = 0;
  private measured = false;
  private count = 0;
  private started = MEASURING;
  private timer: NodeJS.Timeout | undefined;
  private readonly storeOffset = new OffsetBounds();
  private lastFailure: Error | undefined;

  constructor(private readonly options: LogClockOptions) {
    this.localMs = options.localMs ?? Date.now;
    this.monotonicMs = options.monotonicMs ?? (() => performance.now());
  }

  /** A property, not a method: read models are handed `clock.now` on its own. */
  readonly now = isoClock(() => this.localMs() - this.offsetMs);

  reading(): ClockReading {
    const liveNodes = new Set([this.options.nodeId]);
    for (const peer of this.livePeers()) liveNodes.add(peer.beat.node);
    for (const node of liveNodes) this.seenLive.add(node);
    const stoppedNodes = new Set([...this.seenLive].filter((node) => !liveNodes.has(node)));
    return { offsetMs: this.offsetMs, trusted: this.measured && Math.abs(this.offsetMs) <= this.options.maxOffsetMs, liveNodes, stoppedNodes };
  }

  /**
   * Every process in the store's heartbeats, read now (this one beats to read them): how long ago
   * each last beat, on this process's clock corrected by what it measured of the other's.
   */
  async liveness(): Promise<NodeLiveness[]> {
    await this.beat();
    const { heartbeatMs } = this.options;
    const local = this.localMs();
    const logTime = (localMs: number) => new Date(localMs - this.offsetMs).toISOString();
    const own = logTime(local);
    const nodes: NodeLiveness[] = [
      { node: this.options.nodeId, instance: this.instance, state: 'live', since: this.started === MEASURING ? own : this.started, lastBeat: own, self: true },
    ];
    for (const { beat, offset } of this.peers.values()) {
      const written = beat.clockMs + offset.estimate();
      const age = local - written;
      const state = age <= heartbeatMs * 1.5 + READ_SLACK_MS ? 'live' : age <= heartbeatMs * 1.5 * LEASE_BEATS ? 'lapsed' : 'gone';
      const lastBeat = logTime(written);
      nodes.push({ node: beat.node, instance: beat.instance, state, since: state === 'live' && beat.started !== MEASURING ? beat.started : lastBeat, lastBeat, self: false });
    }
    return nodes.sort((a, b) => a.node.localeCompare(b.node) || b.lastBeat.localeCompare(a.lastBeat));
  }

  /** The last beat that failed (the store unreachable), cleared by the next one that works. */
  failure(): Error | undefined {
    return this.lastFailure;
  }

  /**
   * Measures the offset before anything is decided: with other instances recorded, beats twice,
   * a little over one interval apart, so that the peers whose count moved in between are known
   * to be alive. Fails with
   * DuplicateNodeError when a live process holds this NODE_ID.
   */
  async start(): Promise<void> {
    await this.beat();
    if (this.lastFailure) throw this.lastFailure;
    // Alone in the store: nothing to wait for. Else watch the others' counts for a beat.
    if (this.peers.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, Math.round(this.options.heartbeatMs * 1.2)));
      await this.beat();
    }
    this.started = this.now();
    const twin = this.livePeers().find((peer) => peer.beat.node === this.options.nodeId);
    if (twin) {
      throw new DuplicateNodeError(
        `Another live process already runs as NODE_ID=${this.options.nodeId} (instance ${twin.beat.instance}, started ${twin.beat.started}): give each process its own NODE_ID`,
      );
    }
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** At a clean shutdown: stops beating and removes this instance's row (a restart waits for nobody). */
  async leave(): Promise<void> {
    this.stop();
    const mine: NodeBeat = { node: this.options.nodeId, instance: this.instance, started: this.started, clockMs: this.localMs(), count: ++this.count };
    await this.options.store.beat(mine, [this.instance]).catch(() => undefined);
  }

  /** One beat now (tests and start use it; the timer runs it every interval). */
  async beat(): Promise<void> {
    const sentAt = this.localMs();
    const mine: NodeBeat = { node: this.options.nodeId, instance: this.instance, started: this.started, clockMs: sentAt, count: ++this.count };
    let reading: BeatReading;
    try {
      reading = await this.options.store.beat(mine, this.forgettable());
      this.lastFailure = undefined;
    } catch (error) {
      this.lastFailure = error as Error;
      return;
    }
    const receivedAt = this.localMs();
    this.observe(reading, { sentAt, receivedAt });
  }

  private schedule(): void {
    // A jittered interval: readings land at different moments after the peers' beats, so the
    // best of a few is read soon after the peer wrote it.
    const delay = this.options.heartbeatMs * (0.75 + Math.random() * 0.5);
    this.timer = setTimeout(() => void this.beat().finally(() => this.timer && this.schedule()), delay);
    this.timer.unref();
  }

  private observe(reading: BeatReading, at: { sentAt: number; receivedAt: number }): void {
    const now = this.monotonicMs();
    for (const beat of reading.beats) {
      if (beat.instance === this.instance) continue;
      const known = this.peers.get(beat.instance);
      const moved = !known || known.beat.count !== beat.count;
      const peer: Peer = known ?? { beat, seenAt: now, movedAt: -Infinity, offset: new OffsetBounds() };
      // First sight says nothing of liveness: the count must be seen to move.
      if (known && moved) peer.movedAt = now;
      peer.beat = beat;
      if (moved) {
        // Read between sentAt and receivedAt, written at most one (jittered) interval before.
        peer.offset.add(at.sentAt - beat.clockMs - this.options.heartbeatMs * 1.25 - READ_SLACK_MS, at.receivedAt - beat.clockMs);
      }
      this.peers.set(beat.instance, peer);
    }
    for (const instance of this.peers.keys()) if (!reading.beats.some((b) => b.instance === instance)) this.peers.delete(instance);
    if (reading.storeClockMs !== undefined) {
      // The store's clock was read somewhere within the round trip.
      this.storeOffset.add(at.sentAt - reading.storeClockMs, at.receivedAt - reading.storeClockMs);
      this.offsetMs = this.storeOffset.estimate();
    } else {
      this.offsetMs = this.seniorOffset();
    }
    this.measured = true;
  }

  /**
   * SQLite: the clock of the live node that has run longest (the earliest `started`, stamped on
   * the log's clock once each node had measured it). A node joining with a wrong clock then moves
   * nobody else's, and every node follows the same one.
   */
  private seniorOffset(): number {
    let senior: { started: string; instance: string; offset: number } = { started: this.started, instance: this.instance, offset: 0 };
    for (const peer of this.livePeers()) {
      const { started, instance } = peer.beat;
      if (started === MEASURING) continue;
      if (senior.started === MEASURING || started < senior.started || (started === senior.started && instance < senior.instance)) {
        senior = { started, instance, offset: peer.offset.estimate() };
      }
    }
    return senior.offset;
  }

  private livePeers(): Peer[] {
    const now = this.monotonicMs();
    const lease = this.options.heartbeatMs * 1.5 * LEASE_BEATS;
    return [...this.peers.values()].filter((peer) => now - peer.movedAt <= lease && peer.offset.known);
  }

  /** Instances seen stopped for long: their rows go (one who comes back beats a new row). */
  private forgettable(): string[] {
    const now = this.monotonicMs();
    const long = this.options.heartbeatMs * FORGET_BEATS;
    return [...this.peers.values()].filter((peer) => now - Math.max(peer.seenAt, peer.movedAt) > long).map((peer) => peer.beat.instance);
  }
}
