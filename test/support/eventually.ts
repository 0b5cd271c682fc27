// The one way a test waits: for a condition, never for a time. A wait that gives up says what it
// was waiting for.
import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** What is awaited, for the failure message (a function when it should show the state at the time). */
  what: string | (() => string);
  timeoutMs?: number;
  /** The pause between two checks; 0: only the rest of this turn of the event loop (a tight wait). */
  everyMs?: number;
}

/**
 * Asks `check` until it answers something other than undefined, null or false, and returns that answer.
 * An error thrown by `check` ends the wait at once (a check stops early by throwing, e.g. when the
 * process it waits on has exited). `options` may be just the `what`.
 */
export async function eventually<T>(check: () => T | undefined | null | false | Promise<T | undefined | null | false>, options: EventuallyOptions | string): Promise<T> {
  const { what, timeoutMs = 10_000, everyMs = 25 } = typeof options === 'string' ? { what: options } : options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await check();
    if (answer !== undefined && answer !== null && answer !== false) return answer;
    if (Date.now() >= deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for: ${typeof what === 'function' ? what() : what}`);
    await (everyMs === 0 ? new Promise(setImmediate) : sleep(everyMs));
  }
}
