// The one way a test says that a call must fail: it gets the error back to look into, and a call
// that succeeds, or fails with another kind of error, fails the test naming the call.
import { inspect } from 'node:util';
import * as assert from 'uvu/assert';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/**
 * The error `subject` fails with: a promise that rejects, or a function that throws or returns a
 * promise that rejects. `expected`: the error's class, or a pattern its message matches. `what`
 * names the call in the failure message.
 */
export async function rejects<E>(subject: Promise<unknown> | (() => unknown), expected: ErrorClass<E>, what?: string): Promise<E>;
export async function rejects(subject: Promise<unknown> | (() => unknown), expected?: RegExp, what?: string): Promise<Error>;
export async function rejects(subject: Promise<unknown> | (() => unknown), expected?: ErrorClass<unknown> | RegExp, what = 'the call'): Promise<unknown> {
  let value: unknown;
  try {
    value = await (typeof subject === 'function' ? subject() : subject);
  } catch (error) {
    if (typeof expected === 'function' && !(error instanceof expected)) {
      fail(`${what} failed with ${describe(error)}, not with a ${expected.name}`, expected.name, error);
    }
    if (expected instanceof RegExp && !expected.test(error instanceof Error ? error.message : String(error))) {
      fail(`${what} failed with ${describe(error)}, whose message does not match ${expected}`, expected, error);
    }
    return error;
  }
  return fail(`${what} succeeded (with ${inspect(value, { depth: 2 })}), where it should have failed`, expected ?? 'a failure', value);
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : inspect(error));

function fail(message: string, expects: unknown, actual: unknown): never {
  throw new assert.Assertion({ message, generated: false, operator: 'rejects', expects, actual });
}
