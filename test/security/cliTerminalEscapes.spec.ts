// A memo is the caller's text, and the CLI prints it to an operator's terminal: escape sequences
// in it must arrive as text, never act on the terminal.
import { execFile } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';

const ROOT = new URL('../..', import.meta.url).pathname;

function cli(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EVENTSTORE_CONNECTION_STRING: '' } },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('cli audit points and events show a memo’s escape sequences (OSC 8 link, clear screen, C1 CSI) escaped; --json stays exact', async () => {
  const memo = 'win \u001b]8;;https://evil.test\u0007click\u001b]8;;\u0007\u001b[2J\u009b31m\u007f';
  const h = await startHarness();
  try {
    const { key } = await h.key(['*'], 'Game \u001b[5mOne');
    const res = await h.post('/adm/points/edit', { oId: ALICE.oId, point: 1, memo }, key);
    assert.is(res.status, 200, res.text);
    const [table, json, events] = await Promise.all([
      cli(h.dataDir, 'audit', 'points', ALICE.oId),
      cli(h.dataDir, 'audit', 'points', ALICE.oId, '--json'),
      cli(h.dataDir, 'events'),
    ]);
    for (const run of [table, events]) {
      assert.is(run.code, 0, run.stderr);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters a terminal would act on are what must not appear
      assert.not.match(run.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, 'no raw control character reaches the terminal');
    }
    assert.ok(table.stdout.includes('win \\u001b]8;;https://evil.test\\u0007click'), table.stdout);
    assert.ok(table.stdout.includes('\\u009b31m\\u007f'));
    assert.is(json.code, 0, json.stderr);
    assert.is(JSON.parse(json.stdout)[0].request.memo, memo);
  } finally {
    await h.close();
  }
});

test.run();
