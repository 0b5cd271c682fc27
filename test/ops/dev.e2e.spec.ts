// `npm run dev` as a newcomer runs it: the entry as a child process on a fresh DATA_DIR and free
// ports. The CLI command it prints, run in a shell as printed, must reach the dev store and find
// the key it issued there, and the printed key must be accepted by the dev service. A port that
// is taken (another copy still running) ends it with one line naming the variable to change.
import { execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
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

function shell(command: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('/bin/sh', ['-c', command], { cwd: root, env }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })),
  );
}

test('the CLI command npm run dev prints reaches the dev store and lists the dev key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-dev-'));
  const env = { ...process.env, DATA_DIR: dir, PORT: '0', SIM_PORT: '0', DEMO_PORT: String(await freePort()), LOG_LEVEL: 'silent' };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/dev.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  try {
    const command = await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`dev exited with ${child.exitCode}:\n${out}`);
        return /^The operator CLI on this store: (.+) keys list$/m.exec(out)?.[1];
      },
      { what: () => `dev to print the CLI command:\n${out}`, timeoutMs: START_TIMEOUT_MS, everyMs: 50 },
    );
    const url = /^community-bridge \(dev\) on (http:\/\/\S+),/m.exec(out)?.[1];
    const apiKey = /^API key \(all permissions\): (\S+)$/m.exec(out)?.[1];
    assert.ok(url && apiKey, out);

    // A DATA_DIR of the shell's own must not matter: the printed command names the store itself.
    const run = await shell(`${command} keys list --json`, { ...process.env, DATA_DIR: join(dir, 'elsewhere') });
    assert.is(run.code, 0, run.stderr);
    const keys = JSON.parse(run.stdout) as Array<{ app: string; permissions: string[]; status: string }>;
    assert.equal(
      keys.map((k) => [k.app, k.permissions, k.status]),
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
    // SIGTERM lets dev close its servers.
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  }
});

/** Runs dev to its end (it must end by itself); what it printed and how it exited. */
function devUntilExit(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/dev.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    }),
  );
}

async function occupied(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

for (const variable of ['SIM_PORT', 'PORT', 'DEMO_PORT'] as const) {
  test(`a port in use as ${variable} ends dev with one line naming ${variable}`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'community-bridge-dev-'));
    const { port, server } = await occupied();
    try {
      const ports = { PORT: '0', SIM_PORT: '0', DEMO_PORT: String(await freePort()), [variable]: String(port) };
      const run = await devUntilExit({ ...process.env, DATA_DIR: dir, LOG_LEVEL: 'silent', ...ports });
      assert.is(run.code, 1, run.stderr);
      assert.is(run.stderr, `Port ${port} (${variable}) is in use: set ${variable} to a free port\n`);
      assert.is(run.stdout, '');
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
}

test('a dev port that is not a port is refused naming its variable, before anything listens', async () => {
  const run = await devUntilExit({ ...process.env, DATA_DIR: '/nonexistent/never-created', SIM_PORT: '80 80', DEMO_PORT: '0' });
  assert.is(run.code, 2, run.stderr);
  assert.is(run.stderr, 'Invalid configuration:\n  SIM_PORT: must be a whole number\n  DEMO_PORT: must be 1 to 65535\n');
});

test.run();
