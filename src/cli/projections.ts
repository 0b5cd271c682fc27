// `projections rebuild`: replays the whole log through a fresh set of every read model the
// service builds, and reports how fast. Read models live in memory (a service start restores
// them from its read-model snapshot, or folds the log the same way), so there is nothing to swap
// or persist: this is the check that the log still folds, start to end, without an error, and
// the figure that says how long a start without a snapshot takes to catch up.
import { performance } from 'node:perf_hooks';
import { ValidationError } from '../domain/errors.js';
import { inApplyOrder, type ReadModels } from '../projections/readModels.js';
import { describeFailure, ProjectionRunner, type CatchUpProgress } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';

/** A read model threw on an event: the log no longer folds. */
export class ReplayError extends Error {}

export interface ProgressOutput {
  /** stdout: the final line. */
  out(text: string): void;
  /** stderr: the progress. */
  err(text: string): void;
  /** A progress bar redrawn in place on a terminal; otherwise a line now and then. */
  tty: boolean;
}

export interface RebuildReport {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  readModels: string[];
}

const BAR = 30;
const LINE_EVERY_MS = 1000;

function progressReporter(head: number, output: ProgressOutput, started: number) {
  let lastLine = started;
  return {
    update({ position, events }: CatchUpProgress) {
      const fraction = head > 0 ? Math.min(1, position / head) : 1;
      const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
      const rate = Math.round(events / Math.max((performance.now() - started) / 1000, 1e-3));
      if (output.tty) {
        const filled = Math.round(fraction * BAR);
        output.err(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${percent}  ${events} events  ${rate} events/s\x1b[K`);
      } else if (performance.now() - lastLine >= LINE_EVERY_MS) {
        lastLine = performance.now();
        output.err(`rebuild: ${events} events replayed (${percent.trim()}, ${rate} events/s)\n`);
      }
    },
    done() {
      if (output.tty) output.err('\r\x1b[K');
    },
  };
}

/**
 * Folds the whole log into `readModels` (fresh ones: createReadModels()), in the order the
 * service uses, and reports the count and the rate.
 */
export async function rebuild(store: EventStore, readModels: ReadModels, output: ProgressOutput): Promise<RebuildReport> {
  const projections = inApplyOrder(readModels);
  const head = await store.headPosition();
  const started = performance.now();
  const progress = progressReporter(head, output, started);
  const runner = new ProjectionRunner(store, projections);
  let events = 0;
  try {
    await runner.start({
      onProgress: (step) => {
        events = step.events;
        progress.update(step);
      },
    });
  } finally {
    progress.done();
    await runner.stop();
  }
  // The runner folds on past a read model that throws; the first failure is what to report.
  const [failure] = runner.failures;
  if (failure) throw new ReplayError(describeFailure(failure));
  const seconds = (performance.now() - started) / 1000;
  return { events, seconds, eventsPerSecond: Math.round(events / Math.max(seconds, 1e-6)), readModels: projections.map((p) => p.name) };
}

export async function projectionsCommand(
  store: EventStore,
  createReadModels: () => ReadModels,
  args: string[],
  options: { json?: boolean },
  output: ProgressOutput,
): Promise<void> {
  const [action] = args;
  if (action !== 'rebuild') throw new ValidationError(`projections: unknown action "${action ?? ''}" (rebuild)`);
  const report = await rebuild(store, createReadModels(), output);
  if (options.json) return output.out(`${JSON.stringify({ ...report, seconds: Number(report.seconds.toFixed(3)) })}\n`);
  output.out(
    `Rebuilt ${report.readModels.length} read models from ${report.events} events in ${report.seconds.toFixed(2)} s (${report.eventsPerSecond} events/s); every event folded without error.\n`,
  );
}
