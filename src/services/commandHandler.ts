// Runs a decider against one stream: read → fold → decide → append with the expected revision.
// A concurrent writer makes the append fail with ConcurrencyError; the command is then decided
// again on the fresh state, after a jittered pause, until a deadline.
//
// Commands on one stream handled by this process run one after another, so they never conflict
// with each other: a busy stream costs one commit per command rather than rounds of conflicts
// and retries (an append is in flight for a whole commit, fsync included, which is plenty of
// time for the next request on that stream to arrive). Other processes and nodes still can
// conflict, and that is what the retries are for.
import { setTimeout } from 'node:timers/promises';
import { fold, type Decider } from '../domain/decider.js';
import { ConcurrencyError } from '../domain/errors.js';
import type { EventStore } from '../store/port.js';

export interface Handled<State, Event> {
  events: Event[];
  state: State;
  /**
   * Global position of the stream's last event after handling (appended now or found there), so
   * the caller can wait for read models to include it; undefined for a stream that stays empty.
   */
  position: number | undefined;
}

/** Per store, the last command queued on each stream (entries leave once their queue is empty). */
const queues = new WeakMap<EventStore, Map<string, Promise<unknown>>>();

function oneAtATime<T>(store: EventStore, streamName: string, job: () => Promise<T>): Promise<T> {
  let streams = queues.get(store);
  if (!streams) queues.set(store, (streams = new Map()));
  const previous = streams.get(streamName);
  const result = previous ? previous.then(job, job) : job();
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  streams.set(streamName, tail);
  void tail.then(() => {
    if (streams.get(streamName) === tail) streams.delete(streamName);
  });
  return result;
}

/** How long a command keeps deciding again when other writers keep moving its stream. */
const CONFLICT_DEADLINE_MS = 2000;

export function handleCommand<State, Command, Event extends { type: string; data: unknown }>(
  store: EventStore,
  streamName: string,
  decider: Decider<State, Command, Event>,
  command: Command,
): Promise<Handled<State, Event>> {
  return oneAtATime(store, streamName, () => decideAndAppend(store, streamName, decider, command));
}

async function decideAndAppend<State, Command, Event extends { type: string; data: unknown }>(
  store: EventStore,
  streamName: string,
  decider: Decider<State, Command, Event>,
  command: Command,
): Promise<Handled<State, Event>> {
  const deadline = performance.now() + CONFLICT_DEADLINE_MS;
  for (let attempt = 1; ; attempt++) {
    const recorded = await store.readStream(streamName);
    const state = fold(decider, recorded as unknown as Event[]);
    const events = decider.decide(command, state);
    const after = events.reduce(decider.evolve, state);
    if (events.length === 0) return { events, state: after, position: recorded.at(-1)?.position };
    const expectedRevision = recorded.length === 0 ? 'no_stream' : recorded.at(-1)!.revision;
    try {
      const { position } = await store.append(streamName, events, { expectedRevision });
      return { events, state: after, position };
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || performance.now() >= deadline) throw error;
      await setTimeout(backoffMs(attempt));
    }
  }
}

/** Full jitter: writers that collided once spread out instead of colliding again in step. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(200, 5 * 2 ** attempt);
}
