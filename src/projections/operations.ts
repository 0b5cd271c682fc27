// Platform operations. An operation's whole record is read from its own stream when asked (an
// audit page, a retry's answer, the console): memory keeps only what must answer at once — each
// operation's status, each user's operations in log order, and whole records of the operations
// whose outcome is not known yet. Full records of every operation would grow with the log, and
// take most of the service's memory and of its start-up time.
import type { Actor, OperationAnsweredAfterResolution, OperationOutcome, OperationRequested, Resolver } from '../domain/events.js';
import type { OperationView } from '../domain/idempotency.js';
import { isOperationRequested, statusAfter, type OperationStatus } from '../domain/operation.js';
import { streams } from '../domain/events.js';
import { readEventMetadata } from '../system/eventMetadata.js';
import type { EventStore, RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';
import { NumberColumn, StringColumn, type StringColumnState } from './columns.js';

export type OperationKind = OperationRequested['type'];

export interface OperationRecord extends Actor {
  operationId: string;
  /** Global log position of the request event: the record's place in history (audit cursors). */
  position: number;
  /** Revision of the operation stream's last event: the expected revision of the next append. */
  revision: number;
  kind: OperationKind;
  oId: string;
  userId: string;
  userName: string;
  request: OperationRequested['data']['request'];
  requestedAt: string;
  /** The node that sent it, when recorded. */
  node?: string;
  /** The Idempotency-Key stream of the request, when it sent one. */
  claim?: string;
  /** That Idempotency-Key as the caller sent it (recorded from this version on). */
  idempotencyKey?: string;
  /** The X-Request-Id of the request that recorded it (the caller's, or one the service made up). */
  requestId?: string;
  status: OperationStatus;
  /** The latest outcome; an operator's resolution or a late answer replaces an unknown one. */
  outcome?: { type: OperationOutcome['type']; detail: string; at: string };
  /** Why it became unknown, kept after a resolution settles it. */
  unknownReason?: string;
  resolution?: { applied: boolean; note: string; by: Resolver; at: string };
  /** The platform's answer to the sender, when it arrived after the resolution (kept beside it). */
  answeredAfterResolution?: { answer: OperationOutcome['type']; detail: string; at: string };
}

/** Where one of a user's operations sits in the log: enough to page a history before reading it. */
export interface OperationRef {
  position: number;
  operationId: string;
}

const OUTCOMES = new Set<string>(['OperationApplied', 'OperationRejected', 'OperationFailed', 'OperationOutcomeUnknown', 'OperationResolved']);
const KINDS = new Map<string, OperationKind>(
  ['PointsEditRequested', 'MedalGiveRequested', 'MedalRemoveRequested', 'ItemsEditRequested'].map((kind) => [kind, kind as OperationKind]),
);
const STATUSES: readonly OperationStatus[] = ['pending', 'applied', 'rejected', 'failed', 'unknown'];
/** One shared view per status and resolution: the status index holds no object of its own per operation. */
const VIEWS = new Map(STATUSES.map((status) => [status, [Object.freeze({ status, resolved: false }), Object.freeze({ status, resolved: true })] as const]));

function detailOf(event: OperationOutcome): string {
  const data = event.data;
  if ('message' in data) return data.message;
  if ('reason' in data) return data.reason;
  return data.note;
}

/** A request event's record, before any outcome. */
function requestedRecord(recorded: RecordedEvent): OperationRecord {
  const { type, data } = recorded as unknown as OperationRequested;
  const { requestId } = readEventMetadata(recorded.metadata);
  return {
    operationId: data.operationId,
    position: recorded.position,
    revision: recorded.revision,
    kind: KINDS.get(type)!,
    oId: data.oId,
    userId: data.userId,
    userName: data.userName,
    request: data.request,
    requestedAt: data.at,
    appId: data.appId,
    keyId: data.keyId,
    ...(data.node !== undefined && { node: data.node }),
    ...(data.claim !== undefined && { claim: data.claim }),
    ...(data.idempotencyKey !== undefined && { idempotencyKey: data.idempotencyKey }),
    ...(requestId !== undefined && { requestId }),
    status: 'pending',
  };
}

/** Applies an outcome event to the record of its operation, in place. */
function applyOutcome(record: OperationRecord, recorded: RecordedEvent): void {
  const event = asDomain(recorded) as unknown as OperationOutcome;
  record.revision = recorded.revision;
  record.status = statusAfter(event);
  record.outcome = { type: event.type, detail: detailOf(event), at: event.data.at };
  if (event.type === 'OperationOutcomeUnknown') record.unknownReason = event.data.reason;
  if (event.type === 'OperationResolved') {
    const { applied, note, by, at } = event.data;
    record.resolution = { applied, note, by, at };
  }
}

/** The operation's record as its stream tells it; undefined when no request is recorded there. */
export async function readOperation(store: Pick<EventStore, 'readStream'>, operationId: string): Promise<OperationRecord | undefined> {
  let record: OperationRecord | undefined;
  for (const recorded of await store.readStream(streams.operation(operationId))) {
    if (isOperationRequested(recorded)) record = requestedRecord(recorded);
    else if (record && OUTCOMES.has(recorded.type)) applyOutcome(record, recorded);
    else if (record && recorded.type === 'OperationAnsweredAfterResolution') {
      const { answer, detail, at } = (recorded as unknown as OperationAnsweredAfterResolution).data;
      record.revision = recorded.revision;
      record.answeredAfterResolution = { answer, detail, at };
    }
  }
  return record;
}

/** The records of these operations, in the same order (each read from its stream). */
export async function readOperations(store: Pick<EventStore, 'readStream'>, refs: readonly OperationRef[]): Promise<OperationRecord[]> {
  const records = await Promise.all(refs.map((ref) => readOperation(store, ref.operationId)));
  return records.filter((record) => record !== undefined);
}

/**
 * Folds what an applied operation changed (items, medals): handed each request once it is applied.
 * Its state is part of the operations read model's snapshot (and of its version).
 */
export interface AppliedOperationsFold {
  applied(requested: OperationRequested): void;
  snapshotState(): unknown;
  restoreState(state: unknown): void;
  encodeAhead?(entries: number): boolean;
}

export interface OperationsReadModelOptions {
  now: () => string;
  /**
   * How long after an operation settles an Idempotency-Key can still name it: the key's life
   * after its request ended, plus the longest a request can run.
   */
  keyReachMs: number;
}

/** A settled operation's status, and until when (ms) a key can ask for it. */
interface SettledView {
  view: OperationView;
  until: number;
}

const SWEEP_EVERY = 1000;

/** The per-operation columns as typed arrays, each kind and app as its index in a table: one block each to save and to read back. */
interface OperationsState {
  keyReachMs: number;
  settledViews: Map<string, SettledView>;
  horizon: number;
  settledSinceSweep: number;
  positions: Float64Array<ArrayBuffer>;
  operationIds: StringColumnState;
  kinds: Uint8Array<ArrayBuffer>;
  apps: string[];
  appIds: Uint32Array<ArrayBuffer>;
  previousOfUser: Int32Array<ArrayBuffer>;
  newestOfUser: Map<string, number>;
  requests: Map<string, RecordedEvent>;
  records: Map<string, OperationRecord>;
  conflicts: Map<string, number>;
  folds: unknown[];
}

const KIND_LIST = [...KINDS.values()];
const KIND_INDEX = new Map(KIND_LIST.map((kind, i) => [kind, i]));

/**
 * What must answer without a read: the status of each operation a retry can ask about (those sent
 * under an Idempotency-Key, and the ones a takeover abandoned, while a key can name them), each
 * user's operations in log order (audit pages), and the operations without a known outcome.
 */
export class OperationsReadModel implements Projection {
  readonly name = 'operations';
  /** Covers the folds' state too (items, medals). */
  readonly version = 1;
  readonly handles = [
    'PointsEditRequested',
    'MedalGiveRequested',
    'MedalRemoveRequested',
    'ItemsEditRequested',
    'OperationApplied',
    'OperationRejected',
    'OperationFailed',
    'OperationOutcomeUnknown',
    'OperationResolved',
    'OperationAbandoned',
    'OperationAnsweredAfterResolution',
  ] as const;
  /**
   * Settled operations under a key, and abandoned ones, roughly in the order they settled; an
   * unsettled one's view is its record's.
   */
  private settledViews = new Map<string, SettledView>();
  /** Settled views whose `until` is before this are not kept (refreshed at each sweep). */
  private horizon = -Infinity;
  private settledSinceSweep = SWEEP_EVERY;
  /**
   * Every operation in log order, as parallel columns (no object, and no array per user, for an
   * operation); each user's operations are chained from the newest back by `previousOfUser`.
   */
  private positions = new NumberColumn((n) => new Float64Array(n));
  private operationIds = new StringColumn();
  /** Each one's kind, as its index in KIND_LIST. */
  private kinds = new NumberColumn((n) => new Uint8Array(n));
  /** Each one's app, as its index in `apps`. */
  private appIds = new NumberColumn((n) => new Uint32Array(n));
  private previousOfUser = new NumberColumn((n) => new Int32Array(n));
  private newestOfUser = new Map<string, number>();
  /** The apps operations were sent for, and each one's index there. */
  private apps: string[] = [];
  private appIndex = new Map<string, number>();
  /**
   * The request events of the operations without a known outcome, in log order. Most outcomes
   * follow at once, so a record is built only for what outlives its request: asked for, or unknown.
   */
  private requests = new Map<string, RecordedEvent>();
  private records = new Map<string, OperationRecord>();
  /** Operations whose sender's answer came after an operator's resolution, for review. */
  private conflicts = new Map<string, number>();

  constructor(
    private readonly options: OperationsReadModelOptions,
    private readonly folds: readonly AppliedOperationsFold[] = [],
  ) {}

  apply(recorded: RecordedEvent): void {
    const { operationId } = recorded.data as { operationId: string };
    switch (recorded.type) {
      case 'PointsEditRequested':
      case 'MedalGiveRequested':
      case 'MedalRemoveRequested':
      case 'ItemsEditRequested':
        this.requested(operationId, recorded);
        return;
      case 'OperationAbandoned':
        this.keepSettled(operationId, 'abandoned', (recorded.data as { at: string }).at);
        return;
      case 'OperationAnsweredAfterResolution':
        this.conflicts.set(operationId, recorded.position);
        return;
      default:
        this.outcome(operationId, recorded);
    }
  }

  snapshotState(): OperationsState {
    const { settledViews, horizon, settledSinceSweep, apps, newestOfUser, requests, records, conflicts } = this;
    return {
      keyReachMs: this.options.keyReachMs,
      settledViews,
      horizon,
      settledSinceSweep,
      positions: this.positions.snapshotState(),
      operationIds: this.operationIds.snapshotState(),
      kinds: this.kinds.snapshotState(),
      apps,
      appIds: this.appIds.snapshotState(),
      previousOfUser: this.previousOfUser.snapshotState(),
      newestOfUser,
      requests,
      records,
      conflicts,
      folds: this.folds.map((fold) => fold.snapshotState()),
    };
  }

  restoreState(state: OperationsState): boolean {
    // Another reach keeps other settled views.
    if (state.keyReachMs !== this.options.keyReachMs || state.folds.length !== this.folds.length) return false;
    ({ settledViews: this.settledViews, horizon: this.horizon, settledSinceSweep: this.settledSinceSweep } = state);
    ({ apps: this.apps, newestOfUser: this.newestOfUser, requests: this.requests, records: this.records, conflicts: this.conflicts } = state);
    this.appIndex = new Map(this.apps.map((appId, i) => [appId, i]));
    this.positions = new NumberColumn((n) => new Float64Array(n), state.positions);
    this.operationIds = new StringColumn(state.operationIds);
    this.kinds = new NumberColumn((n) => new Uint8Array(n), state.kinds);
    this.appIds = new NumberColumn((n) => new Uint32Array(n), state.appIds);
    this.previousOfUser = new NumberColumn((n) => new Int32Array(n), state.previousOfUser);
    // A deserialised view is an object of its own: share the one view per status again.
    for (const settled of this.settledViews.values()) {
      if (settled.view !== 'abandoned') settled.view = VIEWS.get(settled.view.status)![settled.view.resolved ? 1 : 0];
    }
    for (const [i, fold] of this.folds.entries()) fold.restoreState(state.folds[i]);
    return true;
  }

  encodeAhead(entries: number): boolean {
    return this.folds.some((fold) => fold.encodeAhead?.(entries) === true);
  }

  /**
   * What the log says of an operation a retry can ask about (one without a known outcome, one
   * sent under an Idempotency-Key, one abandoned): its status or 'abandoned'; undefined when
   * nothing of it is recorded, or when it was settled without a key.
   */
  view(operationId: string): OperationView | undefined {
    if (!this.requests.has(operationId)) return this.settledViews.get(operationId)?.view;
    const record = this.record(operationId)!;
    return VIEWS.get(record.status)![record.resolution ? 1 : 0];
  }

  /**
   * The user's operations (of one kind, when given; of the apps `reaches` accepts, when given),
   * oldest first: read them with readOperations.
   */
  history(oId: string, kind?: OperationKind, reaches?: (appId: string) => boolean): OperationRef[] {
    const refs: OperationRef[] = [];
    for (let i = this.newestOfUser.get(oId) ?? -1; i >= 0; i = this.previousOfUser.at(i)) {
      if ((kind === undefined || KIND_LIST[this.kinds.at(i)] === kind) && (reaches === undefined || reaches(this.apps[this.appIds.at(i)]!))) {
        refs.push({ position: this.positions.at(i), operationId: this.operationIds.at(i) });
      }
    }
    return refs.reverse();
  }

  /** Operations whose outcome is not known, oldest first. */
  withoutOutcome(status: 'pending' | 'unknown'): OperationRecord[] {
    const found: OperationRecord[] = [];
    for (const operationId of this.requests.keys()) {
      const record = this.record(operationId)!;
      if (record.status === status) found.push(record);
    }
    return found;
  }

  /**
   * Operations an operator resolved and whose sender then had an answer from the platform, oldest
   * first: read them with readOperation to compare the two.
   */
  answeredAfterResolution(): string[] {
    return [...this.conflicts.keys()];
  }

  private requested(operationId: string, recorded: RecordedEvent): void {
    const { oId, appId } = (recorded as unknown as OperationRequested).data;
    this.requests.set(operationId, recorded);
    this.appIds.push(this.appIndexOf(appId));
    this.previousOfUser.push(this.newestOfUser.get(oId) ?? -1);
    this.newestOfUser.set(oId, this.positions.length);
    this.positions.push(recorded.position);
    this.operationIds.push(operationId);
    this.kinds.push(KIND_INDEX.get(recorded.type as OperationKind)!);
  }

  private outcome(operationId: string, recorded: RecordedEvent): void {
    const event = asDomain(recorded) as unknown as OperationOutcome;
    const status = statusAfter(event);
    const request = this.requests.get(operationId);
    if (!request) {
      // Settled before: a later word (a late answer) only changes what a retry is told.
      const settled = this.settledViews.get(operationId);
      if (settled !== undefined && settled.view !== 'abandoned') settled.view = VIEWS.get(status)![settled.view.resolved ? 1 : 0];
      return;
    }
    if (event.type === 'OperationApplied') for (const fold of this.folds) fold.applied(request as unknown as OperationRequested);
    if (status === 'unknown') {
      applyOutcome(this.record(operationId)!, recorded);
      return;
    }
    this.requests.delete(operationId);
    this.records.delete(operationId);
    if ((request.data as OperationRequested['data']).claim !== undefined) {
      this.keepSettled(operationId, VIEWS.get(status)![event.type === 'OperationResolved' ? 1 : 0], event.data.at);
    }
  }

  private keepSettled(operationId: string, view: OperationView, at: string): void {
    if (++this.settledSinceSweep >= SWEEP_EVERY) this.sweep();
    const until = Date.parse(at) + this.options.keyReachMs;
    // Catching up on an old log: the keys that could name it expired long ago.
    if (until >= this.horizon) this.settledViews.set(operationId, { view, until });
  }

  /** Forgets the settled views no key can name any more (oldest first; a late one waits its turn). */
  private sweep(): void {
    this.settledSinceSweep = 0;
    this.horizon = Date.parse(this.options.now());
    for (const [operationId, { until }] of this.settledViews) {
      if (until >= this.horizon) break;
      this.settledViews.delete(operationId);
    }
  }

  private appIndexOf(appId: string): number {
    let index = this.appIndex.get(appId);
    if (index === undefined) {
      index = this.apps.push(appId) - 1;
      this.appIndex.set(appId, index);
    }
    return index;
  }

  private record(operationId: string): OperationRecord | undefined {
    const record = this.records.get(operationId);
    const request = this.requests.get(operationId);
    if (record || !request) return record;
    const requested = requestedRecord(request);
    this.records.set(operationId, requested);
    return requested;
  }
}
