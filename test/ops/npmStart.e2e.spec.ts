// `npm start` stopped as a person or a process manager stops it: SIGTERM or SIGINT to the pid of
// `npm start` itself (not its process group). The service gets the signal, shuts down as on its
// own SIGTERM (exit 0), and no process of it is left running.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';

const root = new URL('../..', import.meta.url).pathname;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function stoppedBy(signal: 'SIGTERM' | 'SIGINT'): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-npm-start-'));
  const npm = spawn('npm', ['start'], { cwd: root, env: { ...process.env, DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info', COMMUNITY_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  npm.stdout.on('data', (d) => (out += d));
  npm.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  let servicePid: number | undefined;
  try {
    // The service's own pid, from its "listening" log line (pino writes it on every line).
    const listening = await eventually(
      () => {
        if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}:\n${out}`);
        const line = out.split('\n').find((l) => l.startsWith('{') && l.includes('"msg":"listening"'));
        return line ? (JSON.parse(line) as { pid: number }) : undefined;
      },
      { what: () => `npm start to listen:\n${out}`, timeoutMs: 60_000, everyMs: 50 },
    );
    servicePid = listening.pid;
    assert.is.not(servicePid, npm.pid, 'the service is a process of its own');
    npm.kill(signal);
    assert.is(await exited, 0, `npm start exits 0 after ${signal}:\n${out}`);
    assert.not.ok(alive(servicePid), `the service (pid ${servicePid}) is gone once npm start is`);
  } finally {
    if (servicePid && alive(servicePid)) process.kill(servicePid, 'SIGKILL');
    if (npm.exitCode === null) npm.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

test('SIGTERM to the pid of npm start stops the service cleanly and leaves no process', () => stoppedBy('SIGTERM'));

test('SIGINT to the pid of npm start does the same', () => stoppedBy('SIGINT'));

test.run();
