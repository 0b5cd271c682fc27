// DATA_DIR holds session ids and profiles: another local user must not read it.
import { stat, readdir, chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { loadConfig } from '../../src/config.js';
import { openCore } from '../../src/core.js';

const mode = async (path: string) => (await stat(path)).mode & 0o777;

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

test('a DATA_DIR readable by everyone is tightened at start', async () => {
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

test.run();
