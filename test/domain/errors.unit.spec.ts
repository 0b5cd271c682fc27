// Whether a failed request changed nothing is read from the error's type: the classes refused
// before anything ran, and BeforeAnyChangeError for whatever failed in a step before any change.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BeforeAnyChangeError, beforeAnyChange, changedNothing, failureOf, PlatformTimeoutError, PlatformUnavailableError } from '../../src/domain/errors.js';
import { rejects } from '../support/rejects.js';

test('a platform failure changed something only if the request may have reached the platform', () => {
  assert.is(changedNothing(new PlatformTimeoutError(5000)), false);
  assert.is(changedNothing(new PlatformUnavailableError('reset', true)), false);
  assert.is(changedNothing(new PlatformUnavailableError('refused', false)), true);
  assert.is(changedNothing(new Error('anything else')), false);
});

test('a failure in a step before any change changed nothing, and still is the failure it carries', async () => {
  const timeout = new PlatformTimeoutError(5000);
  const raised = await rejects(beforeAnyChange(Promise.reject(timeout)), BeforeAnyChangeError, 'the step');
  assert.is(changedNothing(raised), true);
  assert.is(failureOf(raised), timeout);
  assert.is(raised.message, timeout.message);
  // Nothing else is seen through: an error is its own failure.
  assert.is(failureOf(timeout), timeout);
  assert.is(changedNothing(timeout), false);
});

test('a step that succeeds answers as it does, and a thrown non-error passes through as it is', async () => {
  assert.is(await beforeAnyChange(Promise.resolve(7)), 7);
  assert.is(await rejects(beforeAnyChange(Promise.reject('a string')), undefined, 'the step'), 'a string');
  assert.is(changedNothing('a string'), false);
});

test.run();
