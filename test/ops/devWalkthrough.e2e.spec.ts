// README's "Trying it in dev", run as written: its commands, taken from the README, run in a shell
// against `npm run dev` as a child process (its ports and DATA_DIR put in place of the defaults,
// the operation id from the 504 in place of `<operationId>`). One unknown outcome is produced by
// the simulator's fault control, listed and resolved with the CLI, and the retry answers 200.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEMO_USERS } from '../../src/community/demoUsers.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/ports.js';
import { terminate } from '../support/serviceProcess.js';

const root = new URL('../..', import.meta.url).pathname;
const START_TIMEOUT_MS = 30_000;
const COMMUNITY_TIMEOUT_MS = 1000;

/** The README's walkthrough: the first sh block under its heading, one command per entry. */
function walkthrough(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^#### Trying it in dev$/m)[1];
  assert.ok(section, 'README has a "Trying it in dev" section');
  const block = /^```sh\n([\s\S]*?)^```/m.exec(section)?.[1];
  assert.ok(block, 'the section has an sh block');
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

function shell(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // The commands name their store themselves, as a reader's shell would not have DATA_DIR set.
  const env = { ...process.env, DATA_DIR: undefined };
  return new Promise((resolve) =>
    execFile('/bin/sh', ['-c', command], { cwd: root, env }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })),
  );
}

test('the README walkthrough produces, lists and resolves one unknown outcome in dev', async () => {
  const commands = walkthrough();
  assert.is(commands.length, 6, commands.join('\n'));
  const shellCheck = await shell('command -v curl');
  assert.is(shellCheck.code, 0, 'the walkthrough needs curl on PATH');

  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-walkthrough-'));
  const [servicePort, simPort, demoPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    DATA_DIR: dir,
    PORT: String(servicePort),
    SIM_PORT: String(simPort),
    DEMO_PORT: String(demoPort),
    COMMUNITY_TIMEOUT_MS: String(COMMUNITY_TIMEOUT_MS),
    LOG_LEVEL: 'silent',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/dev.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  try {
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`dev exited with ${child.exitCode}:\n${out}`);
        return /^Platform faults /m.test(out) && /^Try:/m.test(out);
      },
      { what: () => `dev to start:\n${out}`, timeoutMs: START_TIMEOUT_MS, everyMs: 50 },
    );
    assert.match(out, `Platform faults (README, "Trying it in dev"): http://127.0.0.1:${simPort}/_faults`);

    let operationId = '';
    const run = (command: string) =>
      shell(
        command
          .replaceAll('http://127.0.0.1:8091', `http://127.0.0.1:${simPort}`)
          .replaceAll('http://127.0.0.1:8090', `http://127.0.0.1:${servicePort}`)
          .replaceAll('./data/dev', dir)
          .replaceAll('data/dev', dir)
          .replaceAll('<operationId>', operationId),
      );
    const [queue, list, edit, listUnknown, resolve, retry] = commands as [string, string, string, string, string, string];

    const alicePoints = async () => {
      const profile = await fetch(`http://127.0.0.1:${simPort}/user/${DEMO_USERS[0]!.userName}`, { headers: { 'User-Agent': 'test' } });
      return ((await profile.json()) as { userPoint: number }).userPoint;
    };
    const pointsBefore = await alicePoints();

    // Queue an apply-then-hang on points, and see it listed.
    const fault = { path: '/user/edit/points', mode: 'apply-then-hang', count: 1 };
    const queued = await run(queue);
    assert.equal(JSON.parse(queued.stdout), { queued: [fault] }, queued.stderr);
    assert.equal(JSON.parse((await run(list)).stdout), { queued: [fault] });

    // The points edit: applied by the simulator, never answered, so the service's own timeout ends
    // it with 504 outcome unknown.
    const unknown = await run(edit);
    const body = JSON.parse(unknown.stdout);
    assert.is(body.code, 504, unknown.stdout);
    assert.match(body.message, /^Outcome unknown: /);
    assert.is(body.data.status, 'unknown');
    operationId = body.data.operationId;
    assert.is(await alicePoints(), pointsBefore + 10, 'the platform applied it');
    assert.equal(JSON.parse((await run(list)).stdout), { queued: [] }, 'the fault was spent');

    const listed = await run(listUnknown);
    assert.is(listed.code, 0, listed.stderr);
    const row = listed.stdout.split('\n').find((line) => line.startsWith(operationId));
    assert.ok(row, listed.stdout);
    assert.match(row, /\bunknown\b.*\bPointsEdit\b/);
    assert.match(row, DEMO_USERS[0]!.oId);

    const resolved = await run(resolve);
    assert.is(resolved.code, 0, resolved.stderr);
    assert.match(resolved.stdout, new RegExp(`^Operation ${operationId} resolved as applied by `));

    // The retry with the same key: the resolution's answer, and the platform is not called again.
    const replayed = await run(retry);
    const answer = JSON.parse(replayed.stdout);
    assert.is(answer.code, 0, replayed.stdout);
    assert.match(answer.msg, /^Applied \(resolved by operator .+: seen in the simulator\)$/);
    assert.is((await run(listUnknown)).stdout, 'No operation has an unknown outcome.\n');
    assert.is(await alicePoints(), pointsBefore + 10, 'not sent again');
  } finally {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
