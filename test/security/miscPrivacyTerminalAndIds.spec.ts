// Attacks on the edges: reading DATA_DIR as another local user (it holds session ids and
// profiles); a memo carrying terminal escape sequences, printed raw to the operator by the CLI;
// an oId that is not the platform's id (a lone surrogate used to answer 502).
import { execFile } from 'node:child_process';
import { stat, readdir, chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { connect, signIn } from '../realtime/support.js';
import { loadConfig } from '../../src/config.js';
import { openCore } from '../../src/core.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const mode = async (path: string) => (await stat(path)).mode & 0o777;

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

test('DATA_DIR is 0700 and every file in it (the log, its -wal and -shm, the session secret) 0600', async () => {
  const h = await startHarness();
  try {
    const { stream, clientId } = await connect(h);
    await signIn(h, clientId, ALICE.oId); // a session id and a profile are in the log now
    stream.close();
    assert.is(await mode(h.dataDir), 0o700);
    const files = await readdir(h.dataDir);
    for (const name of ['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm', 'session-secret']) assert.ok(files.includes(name), name);
    for (const name of files) assert.is(await mode(join(h.dataDir, name)), 0o600, name);
  } finally {
    await h.close();
  }
});

test('a DATA_DIR an older version left readable by everyone is tightened at start', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cb-perms-'));
  try {
    await chmod(dir, 0o755);
    await writeFile(join(dir, 'events.sqlite'), '', { mode: 0o644 });
    await chmod(join(dir, 'events.sqlite'), 0o644);
    const core = await openCore(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }));
    await core.runner.stop();
    await core.store.close();
    assert.is(await mode(dir), 0o700);
    assert.is(await mode(join(dir, 'events.sqlite')), 0o600);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

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

test('oIds that are not the platform’s ids are refused with 400 naming oId, in bodies, paths and push lists', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['*']);
    const bodies: Array<[string, string]> = [
      ['/adm/points/edit', '{"oId":"\\ud800","point":1,"memo":"m"}'],
      ['/adm/points/edit', '{"oId":"alice","point":1,"memo":"m"}'],
      ['/adm/items/query', '{"oId":"1630399136785/../x"}'],
      ['/adm/vip/submit', `{"oId":"${'9'.repeat(21)}","quality":"vip","expired":"2030-01-01 00:00:00"}`],
    ];
    for (const [path, raw] of bodies) {
      const res = await h.request('POST', path, { raw, apiKey: key });
      assert.is(res.status, 400, `${path} ${raw}: ${res.text}`);
      assert.match(res.body.message, /^oId: must be the platform's user id/);
    }
    const push = await h.request('POST', '/adm/message/push', { raw: '{"oIds":["1","\\udfff"],"name":"n","data":{}}', apiKey: key });
    assert.is(push.status, 400, push.text);
    assert.match(push.body.message, /^oIds\.1: must be the platform's user id/);
    for (const path of ['/adm/vip/%ED%A0%80', '/adm/liveness/abc', '/adm/audit/points/x1', '/adm/audit/vip/%F0%9F%98%80']) {
      const res = await h.get(path, key);
      assert.is(res.status, 400, `${path}: ${res.text}`);
      assert.match(res.body.message, /^oId: /);
    }
    assert.is((await h.post('/adm/items/query', { oId: ALICE.oId }, key)).status, 200, 'a real id still works');
  } finally {
    await h.close();
  }
});

test.run();
