// "Running it" (README, Operating): the service as an operator runs it — a child process started like
// `npm start`, JSON logs on stdout, and SIGTERM.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import { createSimulator, SIMULATOR_KEY } from '../../src/community/simulator.js';
import { streams } from '../../src/domain/events.js';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { eventually } from '../support/eventually.js';
import { ALICE, defaultUsers } from '../support/harness.js';

const LOOKUP_PATH = '/api/user/getInfoById';

interface Running {
  child: ChildProcess;
  url: string;
  lines: () => Array<Record<string, unknown>>;
  stdout: () => string;
}

async function startProcess(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const listening = await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${out}`);
      return lines().find((l) => l.msg === 'listening');
    },
    { what: () => `the service to listen:\n${out}`, timeoutMs: 20_000, everyMs: 50 },
  );
  return { child, url: listening.url as string, lines, stdout: () => out };
}

function createKey(dataDir: string): string {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'keys', 'create', '--app-id', 'game-one', '--app', 'Game One', '--permissions', '*', '--json'],
    {
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    },
  );
  assert.is(result.status, 0, result.stderr);
  return JSON.parse(result.stdout).key;
}

async function withService(run: (ctx: { service: Running; key: string; sim: ReturnType<typeof createSimulator> }) => Promise<void>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-process-'));
  const sim = createSimulator({ users: defaultUsers() });
  const platform = await sim.listen();
  const key = createKey(dataDir);
  const service = await startProcess({ DATA_DIR: dataDir, COMMUNITY_URL: platform.url, COMMUNITY_KEY: SIMULATOR_KEY, LOG_LEVEL: 'info' });
  try {
    await run({ service, key, sim });
  } finally {
    service.child.kill('SIGKILL');
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

test('each request is one JSON log line with request id, app, route, status and duration, and no secret', () =>
  withService(async ({ service, key }) => {
    const res = await fetch(`${service.url}/adm/points/edit`, {
      method: 'POST',
      headers: { apiKey: key, 'content-type': 'application/json', 'x-request-id': 'trace-123', cookie: 'cb_session=not-a-real-session' },
      body: JSON.stringify({ oId: ALICE.oId, point: 3, memo: 'logged' }),
    });
    assert.is(res.status, 200);
    assert.is(res.headers.get('x-request-id'), 'trace-123');
    const generated = await fetch(`${service.url}/healthz`);
    assert.match(generated.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);

    const entry = await eventually(() => service.lines().find((l) => l.msg === 'request' && l.requestId === 'trace-123'), {
      what: () => `the request's log line:\n${service.stdout()}`,
    });
    assert.is(entry.appId, 'game-one');
    assert.is(entry.method, 'POST');
    assert.is(entry.route, '/adm/points/edit');
    assert.is(entry.status, '200');
    assert.type(entry.durationMs, 'number');
    const everything = service.stdout();
    assert.not.ok(everything.includes(key), 'the API key never reaches a log');
    assert.not.ok(everything.includes('not-a-real-session'), 'nor a session cookie');
    assert.not.ok(everything.includes(SIMULATOR_KEY), 'nor the gold-finger key');
  }));

test('SIGTERM: open SSE streams end cleanly, in-flight requests finish, new connections are refused, the process exits 0 by itself', () =>
  withService(async ({ service, key, sim }) => {
    const sse = await fetch(`${service.url}/api/realtime`);
    const reader = sse.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('PB_CONNECT')) received += decoder.decode((await reader.read()).value);
    const streamEnded = (async () => {
      for (;;) if ((await reader.read()).done) return 'ended';
    })().catch((error: Error) => `failed: ${error.message}`);
    sim.state.setDelay(700);
    const inFlight = fetch(`${service.url}/adm/points/edit`, {
      method: 'POST',
      headers: { apiKey: key, 'content-type': 'application/json' },
      body: JSON.stringify({ oId: ALICE.oId, point: 1, memo: 'in flight at shutdown' }),
    });
    // In flight: the service waits on the (delayed) platform for its user lookup.
    await eventually(() => sim.state.calls(LOOKUP_PATH) > 0, 'the edit to reach the platform');
    service.child.kill('SIGTERM');
    // The signal takes effect once the process gets to it (later on a busy machine): from then
    // on, while the in-flight request still runs, a new connection is refused.
    const refusedAfterSigterm = () =>
      fetch(`${service.url}/healthz`).then(
        () => false,
        () => true,
      );
    await eventually(refusedAfterSigterm, { what: 'new connections to be refused after SIGTERM', timeoutMs: 2500, everyMs: 50 });
    const answer = await inFlight;
    assert.is(answer.status, 200, 'the in-flight request completed');
    assert.is(answer.headers.get('connection'), 'close', 'its answer closes the connection, so no request follows it there');
    assert.is(await streamEnded, 'ended', 'the SSE stream ended as a stream does, not with a network error');
    const code = await eventually(() => service.child.exitCode, { what: 'the process to exit after SIGTERM', timeoutMs: 20_000 });
    assert.is(code, 0);
    assert.is(sim.state.user(ALICE.oId)!.points, 101);
  }));

/** Runs the service until it exits by itself (or 20 s pass), with its stderr apart. */
function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

function assertOneLine(run: { code: number | null; stderr: string; stdout: string }, pattern: RegExp) {
  assert.is(run.code, 1, run.stdout + run.stderr);
  const lines = run.stderr.split('\n').filter(Boolean);
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0]!, pattern);
  assert.not.match(run.stderr + run.stdout, /\n\s+at /, 'no stack trace');
}

test('a DATA_DIR that cannot be created stops the start with one line naming the path and the cause, exit 1', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-process-'));
  try {
    await writeFile(join(dir, 'a-file'), 'not a directory');
    const dataDir = join(dir, 'a-file', 'data');
    const run = await runToExit({ DATA_DIR: dataDir });
    assertOneLine(run, new RegExp(`^Cannot open the event store \\(SQLite file ${join(dataDir, 'events.sqlite').replace(/[.]/g, '\\.')}\\): ENOTDIR: not a directory`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a corrupt events.sqlite stops the start with one line naming the file and the cause, exit 1', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-process-'));
  try {
    await writeFile(join(dataDir, 'events.sqlite'), randomBytes(8192));
    const run = await runToExit({ DATA_DIR: dataDir });
    assertOneLine(run, new RegExp(`^Cannot open the event store \\(SQLite file ${join(dataDir, 'events.sqlite').replace(/[.]/g, '\\.')}\\): file is not a database$`));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("a store that refuses the start-up writes (the node's heartbeat, then the recovery) stops the start with one line naming the store and the cause, exit 1", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-process-'));
  const file = join(dataDir, 'events.sqlite');
  // What node-x left pending when it died: its restart must record the operation as unknown.
  const store = new SqliteEventStore({ file });
  const requested = {
    operationId: 'op1',
    oId: ALICE.oId,
    userId: 'u1',
    userName: 'alice',
    request: { point: 1, memo: 'left' },
    at: new Date().toISOString(),
    node: 'node-x',
    appId: 'a',
    keyId: 'k',
  };
  await store.append(streams.operation('op1'), [{ type: 'PointsEditRequested', data: requested }]);
  await store.close();
  // Another process holds the write lock for longer than the store waits for it.
  const locker = new Database(file);
  locker.exec('BEGIN EXCLUSIVE');
  try {
    const run = await runToExit({ DATA_DIR: dataDir, NODE_ID: 'node-x' });
    // The heartbeat is the first write of a start: it meets the lock first.
    assertOneLine(run, new RegExp(`^Cannot record this node's heartbeat in the event store \\(SQLite file ${file.replace(/[.]/g, '\\.')}\\): .*locked`));
  } finally {
    locker.exec('ROLLBACK');
    locker.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
