// The one write path: every change the service records is a command decided against one stream's
// state and appended with that stream's revision as the expected revision. A concurrent writer
// makes the append fail with ConcurrencyError; the command is then decided again on the fresh
// state, after a jittered pause, until a deadline.
//
// Commands on one stream handled by this process run one after another, so they never conflict
// with each other: a busy stream costs one commit per command rather than rounds of conflicts
// and retries (an append is in flight for a whole commit, fsync included, which is plenty of
// time for the next request on that stream to arrive). Other processes and nodes still can
// conflict, and that is what the retries are for.
//
// Every event appended here carries the metadata of the work it is done for (workContext.ts): the
// request, who made it, the node, the event that caused it.
import { setTimeout } from 'node:timers/promises';
import { fold, type Decider } from '../domain/decider.js';
import { ConcurrencyError } from '../domain/errors.js';
import { ClaimLostError } from '../domain/idempotency.js';
import type { AlongsideWrite, EventStore, EventToAppend } from '../store/port.js';
import type { EventMetadata } from '../system/eventMetadata.js';
import type { WorkContext } from '../system/workContext.js';

/** A stream's state and the revision of its last event (-1: the stream does not exist). */
export interface KnownState<State> {
  state: State;
  revision: number;
}

export interface CommandOptions<State> {
  /**
   * The stream as a read model (or the caller) already holds it. The command is decided on it
   * first and the append's revision check tells whether it was current, so a command that
   * appends costs no read. Anything else decided on it (a refusal, nothing to do) is confirmed
   * against the stream itself, because it may lag behind.
   */
  known?: KnownState<State> | undefined;
  /**
   * The Idempotency-Key claim that fences this write: the append carries the claim stream as the
   * request holds it (and, given the state the command leaves, the events to record there with
   * it), so that it fails whole once another request has taken the claim over.
   */
  fence?: ((state: State) => AlongsideWrite) | undefined;
}

export interface Handled<State, Event> {
  events: Event[];
  state: State;
  /** Revision of the stream's last event after handling (-1: the stream does not exist). */
  revision: number;
  /**
   * Global position of the stream's last event after handling (appended now or found there), so
   * the caller can wait for read models to include it; undefined for a stream that stays empty
   * or that was not read.
   */
  position: number | undefined;
}

/**
 * Per store, each stream's queue: a promise that settles, with nothing, once the last command
 * queued on it is done (entries leave once their queue is empty). It holds nothing of what the
 * command answers: a table of a churned Map keeps what it held alive (src/http/draining.ts).
 */
const queues = new WeakMap<EventStore, Map<string, Promise<void>>>();

function oneAtATime<T>(store: EventStore, streamName: string, job: () => Promise<T>): Promise<T> {
  let streams = queues.get(store);
  if (!streams) {
    streams = new Map();
    queues.set(store, streams);
  }
  const previous = streams.get(streamName);
  // The next command runs after this one whichever way it ends.
  const result = previous !== undefined ? previous.then(job) : job();
  const leave = () => {
    if (streams.get(streamName) === done) streams.delete(streamName);
  };
  const done: Promise<void> = result.then(leave, leave);
  streams.set(streamName, done);
  return result;
}

/** How long a command keeps deciding again when other writers keep moving its stream. */
const CONFLICT_DEADLINE_MS = 2000;

export function handleCommand<State, Command, Event extends { type: string; data: unknown }>(
  work: WorkContext,
  store: EventStore,
  streamName: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  options: CommandOptions<State> = {},
): Promise<Handled<State, Event>> {
  return oneAtATime(store, streamName, () => decideAndAppend(work, store, streamName, decider, command, options.known, options.fence));
}

interface Basis<State> extends KnownState<State> {
  /** From the caller rather than read just now: may lag behind the stream. */
  assumed: boolean;
  position: number | undefined;
}

async function decideAndAppend<State, Command, Event extends { type: string; data: unknown }>(
  work: WorkContext,
  store: EventStore,
  streamName: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  known: KnownState<State> | undefined,
  fence: ((state: State) => AlongsideWrite) | undefined,
): Promise<Handled<State, Event>> {
  const deadline = performance.now() + CONFLICT_DEADLINE_MS;
  const metadata = work.metadataFor(streamName);
  let basis: Basis<State> = known ? { state: known.state, revision: known.revision, assumed: true, position: undefined } : await readBasis(store, streamName, decider);
  for (let attempt = 1; ; attempt++) {
    let events: Event[];
    try {
      events = decider.decide(command, basis.state);
    } catch (error) {
      if (!basis.assumed) throw error;
      basis = await readBasis(store, streamName, decider);
      continue;
    }
    if (events.length === 0) {
      if (basis.assumed) {
        basis = await readBasis(store, streamName, decider);
        continue;
      }
      // Nothing to write, but a fenced request that lost its claim says so all the same.
      if (fence) await assertFenceHolds(store, fence(basis.state));
      return { events, state: basis.state, revision: basis.revision, position: basis.position };
    }
    const after = events.reduce(decider.evolve, basis.state);
    const alongside = stampedAlongside(work, fence?.(after));
    try {
      const expectedRevision = basis.revision < 0 ? 'no_stream' : basis.revision;
      const { position, nextExpectedRevision } = await store.append(streamName, stamped(events, metadata), alongside ? { expectedRevision, alongside } : { expectedRevision });
      // With the claim's events in the same append, which position is this stream's last is not known.
      const sideEvents = alongside !== undefined && alongside.events.length > 0;
      work.noteAppended(streamName, sideEvents ? undefined : position);
      if (sideEvents) work.noteAppended(alongside.streamName, undefined);
      return { events, state: after, revision: nextExpectedRevision, position };
    } catch (error) {
      // The claim moved on: this request is no longer the key's, and nothing of it was written.
      if (error instanceof ConcurrencyError && alongside && error.streamName === alongside.streamName) throw new ClaimLostError();
      if (!(error instanceof ConcurrencyError) || performance.now() >= deadline) throw error;
      // An assumed state that was stale is no contention: decide again on the stream at once.
      if (!basis.assumed) await setTimeout(backoffMs(attempt));
      basis = await readBasis(store, streamName, decider);
    }
  }
}

/** The events as appended: each with the context's metadata (one object shared by the append). */
export function stamped(events: EventToAppend[], metadata: Readonly<EventMetadata> | undefined): EventToAppend[] {
  return metadata ? events.map(({ type, data }) => ({ type, data, metadata })) : events;
}

function stampedAlongside(work: WorkContext, write: AlongsideWrite | undefined): AlongsideWrite | undefined {
  if (!write || write.events.length === 0) return write;
  const metadata = work.metadataFor(write.streamName);
  return metadata ? { ...write, events: stamped(write.events, metadata) } : write;
}

async function assertFenceHolds(store: EventStore, fence: AlongsideWrite): Promise<void> {
  const last = (await store.readStream(fence.streamName)).at(-1)?.revision;
  if ((last ?? 'no_stream') !== fence.expectedRevision) throw new ClaimLostError();
}

async function readBasis<State, Event>(store: EventStore, streamName: string, decider: Decider<State, unknown, Event>): Promise<Basis<State>> {
  const recorded = await store.readStream(streamName);
  const last = recorded.at(-1);
  return { state: fold(decider, recorded as unknown as Event[]), revision: last?.revision ?? -1, assumed: false, position: last?.position };
}

/** Full jitter: writers that collided once spread out instead of colliding again in step. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(200, 5 * 2 ** attempt);
}
