// `npm run dev` as a newcomer runs it: the entry as a child process on a fresh DATA_DIR and free
// ports. The CLI command it prints, run in a shell as printed, must reach the dev store and find
// the key it issued there, and the printed key must be accepted by the dev service.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEMO_USERS } from '../../src/community/demoUsers.js';
import { freePort } from '../support/ports.js';

const root = new URL('../..', import.meta.url).pathname;
const START_TIMEOUT_MS = 30_000;

function shell(command: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('/bin/sh', ['-c', command], { cwd: root, env }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })),
  );
}

test('the CLI command npm run dev prints reaches the dev store and lists the dev key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-dev-'));
  const env = { ...process.env, DATA_DIR: dir, PORT: '0', SIM_PORT: '0', DEMO_PORT: String(await freePort()), LOG_LEVEL: 'silent' };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/dev.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  try {
    const printed = () => /^The operator CLI on this store: (.+) keys list$/m.exec(out)?.[1];
    for (const deadline = Date.now() + START_TIMEOUT_MS; !printed(); await sleep(50)) {
      assert.ok(Date.now() < deadline && child.exitCode === null, `dev did not print the CLI command:\n${out}`);
    }
    const command = printed()!;
    const url = /^community-bridge \(dev\) on (http:\/\/\S+),/m.exec(out)?.[1];
    const apiKey = /^API key \(all permissions\): (\S+)$/m.exec(out)?.[1];
    assert.ok(url && apiKey, out);

    // A DATA_DIR of the shell's own must not matter: the printed command names the store itself.
    const run = await shell(`${command} keys list --json`, { ...process.env, DATA_DIR: join(dir, 'elsewhere') });
    assert.is(run.code, 0, run.stderr);
    const keys = JSON.parse(run.stdout);
    assert.equal(
      keys.map((k: any) => [k.app, k.permissions, k.status]),
      [['dev', ['*'], 'enabled']],
    );
    const answer = await fetch(`${url}/adm/vip/${DEMO_USERS[0]!.oId}`, { headers: { apiKey } });
    assert.is(answer.status, 200, await answer.text());

    // The operator console is on for the first demo user, at the address printed.
    const consoleUrl = /^Operator console: (\S+) \(operators: (\S+);/m.exec(out);
    assert.ok(consoleUrl, out);
    assert.is(consoleUrl[2], DEMO_USERS[0]!.oId);
    assert.is((await fetch(consoleUrl[1]!)).status, 200);
  } finally {
    // SIGTERM lets dev close its servers; SIGKILL if it has not gone within seconds.
    child.kill('SIGTERM');
    const stubborn = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(stubborn);
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
