// Read-model snapshots: a node starts from its last snapshot and reads only the log after it,
// instead of folding the whole log again (docs/architecture.md, "Read-model snapshots").
//
// A snapshot is used only when it is this log's, as far as it reaches: the store's head is at or
// past it, and the events it recorded (the newest it had applied, and an anchor in a stream that
// is never deleted) are still there, the same. A read model whose version changed, or whose
// settings would have built it differently, is rebuilt from the log's start while the others start
// from the snapshot. Anything wrong with the file costs the time of a rebuild, never an answer.
import { deserialize, serialize } from 'node:v8';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { streams } from '../domain/events.js';
import type { Logger } from '../log.js';
import type { EventStore, RecordedEvent } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import type { Projection, ProjectionRunner } from './runner.js';
import { DamagedSnapshotError, type readSnapshotFile, writeSnapshotFile, type EventMark, type SnapshotHeader } from './snapshotFile.js';

/** Streams retention deletes (src/services/retention.ts): a snapshot is never recognised by their events. */
const DELETABLE = [streams.client(''), streams.login(''), streams.idempotency('', '').slice(0, -1)];
const deletable = (streamName: string) => DELETABLE.some((prefix) => streamName.startsWith(prefix));

/** Events read back at a time when looking for an anchor before a position. */
const ANCHOR_WINDOW = 1000;
/** How far back an anchor is looked for (events), before the snapshot goes without one. */
const ANCHOR_REACH = 100_000;

/** Why a snapshot was not used: what the start-up log says, and whether it is worth a warning. */
export interface SnapshotRefusal {
  used: false;
  reason: string;
  warn: boolean;
}

export interface SnapshotUse {
  used: true;
  /** The greatest position a read model of it had applied. */
  position: number;
  /** How old it was, on the log's clock. */
  ageMs: number;
  restored: string[];
  /** Read models rebuilt from the log's start, and why. */
  rebuilt: Array<{ name: string; why: string }>;
}

export type SnapshotOutcome = SnapshotUse | SnapshotRefusal;

export interface SnapshotLoad {
  /** The read models restored, and the position each stands at. */
  restored: Map<Projection, number>;
  outcome: SnapshotOutcome;
}

export interface LoadOptions {
  /** Tells the snapshot's age (for the start-up line). Any age will do: retention records what it deletes (StreamsDeleted), and the read models fold that. */
  clock: Clock;
}

const refused = (reason: string, warn = true): SnapshotLoad => ({ restored: new Map(), outcome: { used: false, reason, warn } });

const markOf = ({ position, streamName, revision, type, created }: RecordedEvent): EventMark => ({ position, streamName, revision, type, created });

const describeMark = (mark: EventMark) => `${mark.type} in ${mark.streamName}@${mark.revision} at position ${mark.position}`;

/** The event at `position`, or undefined when the store no longer has it. */
async function eventAt(store: EventStore, position: number): Promise<RecordedEvent | undefined> {
  const [event] = await store.readAll({ after: position - 1, limit: 1 });
  return event?.position === position ? event : undefined;
}

const sameEvent = (mark: EventMark, event: RecordedEvent | undefined) =>
  event !== undefined && event.streamName === mark.streamName && event.revision === mark.revision && event.type === mark.type && event.created === mark.created;

/**
 * Restores into `projections` what can be restored of the snapshot `read` is reading (from
 * `file`: started early, it reads while the store opens). Never throws for the file's sake: a
 * snapshot that cannot be used is a refusal with its reason.
 */
export async function loadSnapshot(
  file: string,
  read: ReturnType<typeof readSnapshotFile>,
  store: EventStore,
  projections: readonly Projection[],
  options: LoadOptions,
): Promise<SnapshotLoad> {
  let content: Awaited<typeof read>;
  try {
    content = await read;
  } catch (error) {
    if (error instanceof DamagedSnapshotError) return refused(`the snapshot ${file} is damaged: ${error.message}`);
    return refused(`the snapshot ${file} cannot be read: ${(error as Error).message}`);
  }
  if (!content) return refused('there is no snapshot yet', false);
  const { header, states } = content;
  const position = Math.max(0, ...header.models.map((model) => model.position));
  const head = await store.headPosition();
  if (head < position) return refused(`the snapshot stands for position ${position} and the log ends at ${head}: it is another log, or this one restored to an earlier point`);
  const problem = await notThisLog(store, header);
  if (problem) return refused(problem);
  const ageMs = Date.parse(options.clock.now()) - Date.parse(header.taken);
  const restored = new Map<Projection, number>();
  const rebuilt: SnapshotUse['rebuilt'] = [];
  for (const projection of projections) {
    const index = header.models.findIndex((model) => model.name === projection.name);
    const saved = header.models[index];
    if (!saved) {
      rebuilt.push({ name: projection.name, why: 'not in the snapshot' });
      continue;
    }
    if (saved.version !== projection.version) {
      rebuilt.push({ name: projection.name, why: `version ${saved.version} in the snapshot, ${projection.version} now` });
      continue;
    }
    // One read model per turn: the node answers its liveness probe meanwhile.
    await nextTurn();
    let state: unknown;
    try {
      state = deserialize(states[index]!);
    } catch (error) {
      rebuilt.push({ name: projection.name, why: `its state does not deserialise (${(error as Error).message})` });
      continue;
    }
    if (!projection.restoreState(state)) {
      rebuilt.push({ name: projection.name, why: 'made under other settings' });
      continue;
    }
    restored.set(projection, saved.position);
  }
  return { restored, outcome: { used: true, position, ageMs, restored: [...restored.keys()].map((p) => p.name), rebuilt } };
}

/** Why the snapshot is not of this log (its events are not the store's), or undefined. */
async function notThisLog(store: EventStore, { anchor, last }: SnapshotHeader): Promise<string | undefined> {
  if (anchor && !sameEvent(anchor, await eventAt(store, anchor.position)))
    return `the log has not got the event the snapshot was taken after (${describeMark(anchor)}): it is another log`;
  // Retention may have deleted it since; then the anchor says enough.
  if (last) {
    const event = await eventAt(store, last.position);
    if (event ? !sameEvent(last, event) : !anchor) return `the log has not got the event the snapshot was taken at (${describeMark(last)}): it is another log`;
  }
  if (!anchor && !last) return 'the snapshot names no event of the log to recognise it by';
  return undefined;
}

export interface SnapshotWriterOptions {
  file: string;
  runner: ProjectionRunner;
  store: EventStore;
  clock: Clock;
  nodeId: string;
  log: Logger;
  /** A snapshot is taken once this many positions have been applied since the last one… */
  everyEvents: number;
  /** …and at least this often while events arrive. */
  intervalMs: number;
  /** The snapshot the start used, if it is to count as the last one (its position and age). */
  used?: { position: number; ageMs: number };
}

/** What a write did, for its log line. */
export interface SnapshotWritten {
  position: number;
  bytes: number;
  /** From the first read model's serialisation to the file's rename. */
  ms: number;
  /** The longest single read model's serialisation: the event loop is held that long at most. */
  longestHoldMs: number;
  longestHoldModel: string;
}

/** Entries a read model encodes ahead of a snapshot per turn of the event loop (a few milliseconds' work). */
const ENCODE_AHEAD_ENTRIES = 2000;

/** How often the writer looks whether a snapshot is due. */
const CHECK_EVERY_MS = 5000;

/**
 * Takes snapshots in the background: when `everyEvents` positions have been applied since the
 * last one, when `intervalMs` has passed with any, and at a clean stop.
 */
export class SnapshotWriter {
  private lastPosition: number;
  private lastAt: number;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<SnapshotWritten | undefined> | undefined;

  constructor(private readonly options: SnapshotWriterOptions) {
    this.lastPosition = options.used?.position ?? 0;
    this.lastAt = performance.now() - (options.used?.ageMs ?? 0);
  }

  start(): void {
    this.timer = setInterval(
      () => {
        if (this.due()) void this.write();
      },
      Math.min(CHECK_EVERY_MS, this.options.intervalMs),
    );
    this.timer.unref();
  }

  /** Stops the timer, and writes a last snapshot unless the last one is recent and nothing moved since. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.writing;
    if (this.options.runner.position > this.lastPosition || performance.now() - this.lastAt >= this.options.intervalMs) await this.write();
  }

  /** Writes one now (one at a time: a call during a write waits for it). */
  write(): Promise<SnapshotWritten | undefined> {
    this.writing ??= this.take()
      .then(
        (written) => {
          if (written) this.options.log.info(written, 'read-model snapshot written');
          return written;
        },
        (error: unknown) => {
          this.options.log.error({ err: error, file: this.options.file }, 'could not write a read-model snapshot; the last one stays, and a write is tried again later');
          return undefined;
        },
      )
      .finally(() => (this.writing = undefined));
    return this.writing;
  }

  private due(): boolean {
    const moved = this.options.runner.position - this.lastPosition;
    const elapsed = performance.now() - this.lastAt;
    return moved >= this.options.everyEvents || (moved > 0 && elapsed >= this.options.intervalMs);
  }

  private async take(): Promise<SnapshotWritten | undefined> {
    const { runner, store, clock, nodeId, file } = this.options;
    const started = performance.now();
    const taken = clock.now();
    const models: SnapshotHeader['models'] = [];
    const states: Buffer[] = [];
    let longestHoldMs = 0;
    let longestHoldModel = '';
    let last: RecordedEvent | undefined;
    // What changed since the last snapshot is encoded a slice per turn first (after a rebuild, every entry).
    for (const projection of runner.projections) {
      while (projection.encodeAhead?.(ENCODE_AHEAD_ENTRIES)) await nextTurn();
    }
    // One read model per turn of the event loop, each at the position the runner has reached then:
    // requests and events go on between them, and a start catches each up from its own position.
    for (const projection of runner.projections) {
      await nextTurn();
      // What a read model built after it threw may be wrong: a start rebuilds it from the log (and fails again, saying so).
      if (runner.failures.some((failure) => failure.readModel === projection.name)) continue;
      const holdStarted = performance.now();
      const state = serialize(projection.snapshotState());
      const holdMs = performance.now() - holdStarted;
      if (holdMs > longestHoldMs) [longestHoldMs, longestHoldModel] = [holdMs, projection.name];
      models.push({ name: projection.name, version: projection.version, position: runner.position, bytes: state.length });
      states.push(state);
      last = runner.lastApplied;
    }
    const position = Math.max(0, ...models.map((model) => model.position));
    if (position === 0) return undefined;
    if (last?.position !== position) last = await eventAt(store, position);
    const anchor = await anchorBefore(store, Math.min(...models.map((model) => model.position)));
    if (!anchor && !last) return undefined;
    const header: SnapshotHeader = { taken, node: nodeId, models, ...(last && { last: markOf(last) }), ...(anchor && { anchor: markOf(anchor) }) };
    const bytes = await writeSnapshotFile(file, header, states);
    this.lastPosition = position;
    this.lastAt = performance.now();
    return { position, bytes, ms: Math.round(performance.now() - started), longestHoldMs: Math.round(longestHoldMs), longestHoldModel };
  }
}

/** The newest event at or before `position` in a stream retention never deletes. */
async function anchorBefore(store: EventStore, position: number): Promise<RecordedEvent | undefined> {
  for (let end = position; end > 0 && position - end < ANCHOR_REACH; end -= ANCHOR_WINDOW) {
    const after = Math.max(0, end - ANCHOR_WINDOW);
    const events = await store.readAll({ after, limit: ANCHOR_WINDOW });
    const found = events.findLast((event) => event.position <= end && !deletable(event.streamName));
    if (found) return found;
  }
  return undefined;
}
