// The Python client's own unit tests (packages/python/tests, `python3 -m unittest`), run from the
// suite so that `npm test` runs them: the webhook signature check against the shared vectors and
// openssl, the retry policy, the error classes, the client's options. Each test must have run and
// passed: a file that failed to import, or a test that was skipped, fails here.
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runPython } from '../support/python.js';

const TESTS = fileURLToPath(new URL('../../packages/python/tests', import.meta.url));

/** Test methods that must be among those that ran and passed, by file. */
const REQUIRED: Record<string, string[]> = {
  test_webhooks: [
    'test_every_case_verifies_as_expected',
    'test_the_known_answers_are_what_openssl_computes',
    'test_a_fresh_signature_verifies_and_returns_its_timestamp',
    'test_a_tampered_body_does_not',
    'test_a_stale_timestamp_does_not_and_the_tolerance_is_a_setting',
    'test_a_rotated_pair_of_secrets_each_verify',
  ],
  test_retry: ['test_an_unknown_outcome_is_never_sent_again', 'test_full_jitter_from_zero_to_the_capped_exponential'],
  test_errors: ['test_each_reason_its_family'],
  test_client_settings: ['test_a_well_formed_key_is_kept_out_of_repr_and_str', 'test_a_malformed_key_is_described_not_repeated'],
};

test('python3 -m unittest: every test of the Python client runs and passes', async () => {
  const run = await runPython(['-m', 'unittest', 'discover', '--start-directory', TESTS, '--verbose']);
  // unittest reports on stderr: one "name (module.Class.name) ... ok" line per test, then the totals.
  assert.is(run.code, 0, run.stderr);
  const passed = [...run.stderr.matchAll(/^(\w+) \((\w+)\.\w+\.\w+\) \.\.\. ok$/gm)].map((m) => `${m[2]}.${m[1]}`);
  const ran = Number(/^Ran (\d+) tests? in /m.exec(run.stderr)?.[1]);
  assert.is(passed.length, ran, `every test that ran passed, none skipped:\n${run.stderr}`);
  assert.match(run.stderr, /^OK$/m);
  for (const [file, names] of Object.entries(REQUIRED)) for (const name of names) assert.ok(passed.includes(`${file}.${name}`), `${file}.${name} ran and passed`);
});

test.run();
