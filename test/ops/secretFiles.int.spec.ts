// Secrets from files: `X_FILE` in place of `X` for the platform keys, the session secret and the
// store's connection string. The file's content is the value (trailing line breaks dropped), and
// every refusal names the variable and the path, never what the file holds.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.js';
import { SECRET_FILE_MAX_BYTES } from '../../src/secretFiles.js';
import { rejects } from '../support/rejects.js';

const root = new URL('../..', import.meta.url).pathname;
const SECRET = 'a-session-secret-of-more-than-32-characters';

async function withDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-secrets-'));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The ConfigError's message loadConfig throws for this environment. */
const refusal = async (env: Record<string, string>) => (await rejects(() => loadConfig(env), ConfigError, 'loadConfig')).message;

test('each secret can come from a file, its trailing line breaks dropped', () =>
  withDir(async (dir) => {
    const file = async (name: string, content: string) => {
      await writeFile(join(dir, name), content);
      return join(dir, name);
    };
    const config = loadConfig({
      COMMUNITY_KEY_FILE: await file('key', 'general-key\n'),
      COMMUNITY_KEY_POINT_FILE: await file('point', 'point-key\r\n'),
      COMMUNITY_KEY_MEDAL_FILE: await file('medal', 'medal-key'),
      COMMUNITY_KEY_ITEM_FILE: await file('item', 'item-key\n\n'),
      SESSION_SECRET_FILE: await file('session', `${SECRET}\n`),
      EVENTSTORE_CONNECTION_STRING_FILE: await file('store', 'postgresql://bridge:p%40ss@db.internal:5432/bridge\n'),
    });
    assert.equal(config.community.keys, { point: 'point-key', metal: 'medal-key', item: 'item-key', liveness: 'general-key' });
    assert.is(config.sessionSecret, SECRET);
    assert.is(config.eventStoreConnectionString, 'postgresql://bridge:p%40ss@db.internal:5432/bridge');
  }));

test('COMMUNITY_KEY_METAL and its _FILE are read as COMMUNITY_KEY_MEDAL, with one warning each', () =>
  withDir(async (dir) => {
    const direct = loadConfig({ COMMUNITY_KEY: 'general-key', COMMUNITY_KEY_METAL: 'medal-key' });
    assert.is(direct.community.keys.metal, 'medal-key');
    assert.equal(direct.deprecatedNames, ['COMMUNITY_KEY_METAL is deprecated: rename it COMMUNITY_KEY_MEDAL']);
    await writeFile(join(dir, 'medal'), 'medal-from-file\n');
    const fromFile = loadConfig({ COMMUNITY_KEY_METAL_FILE: join(dir, 'medal') });
    assert.is(fromFile.community.keys.metal, 'medal-from-file');
    assert.equal(fromFile.deprecatedNames, ['COMMUNITY_KEY_METAL_FILE is deprecated: rename it COMMUNITY_KEY_MEDAL_FILE']);
    assert.is(loadConfig({ COMMUNITY_KEY_MEDAL: 'medal-key' }).deprecatedNames, undefined);
    assert.is(
      await refusal({ COMMUNITY_KEY_METAL: 'old', COMMUNITY_KEY_MEDAL: 'new' }),
      'Invalid configuration:\n  COMMUNITY_KEY_METAL and COMMUNITY_KEY_MEDAL are both set: set only COMMUNITY_KEY_MEDAL',
    );
  }));

test('a file variable set empty counts as unset, like any variable', () => {
  const config = loadConfig({ COMMUNITY_KEY: 'direct', COMMUNITY_KEY_FILE: '', SESSION_SECRET_FILE: '' });
  assert.is(config.community.keys.point, 'direct');
  assert.is(config.sessionSecret, undefined);
});

test('a variable and its _FILE together are refused, naming both', () =>
  withDir(async (dir) => {
    await writeFile(join(dir, 'secret'), `${SECRET}\n`);
    const message = await refusal({
      SESSION_SECRET: SECRET,
      SESSION_SECRET_FILE: join(dir, 'secret'),
      COMMUNITY_KEY_LIVENESS: 'x',
      COMMUNITY_KEY_LIVENESS_FILE: join(dir, 'secret'),
    });
    assert.is(
      message,
      'Invalid configuration:\n  COMMUNITY_KEY_LIVENESS and COMMUNITY_KEY_LIVENESS_FILE are both set: set only one of them\n  SESSION_SECRET and SESSION_SECRET_FILE are both set: set only one of them',
    );
  }));

test('a file that cannot be read, is empty or is too large is refused naming the variable and the path', () =>
  withDir(async (dir) => {
    await mkdir(join(dir, 'a-directory'));
    await writeFile(join(dir, 'empty'), '\n');
    await writeFile(join(dir, 'large'), 'k'.repeat(SECRET_FILE_MAX_BYTES + 1));
    await writeFile(join(dir, 'just-fits'), 'k'.repeat(SECRET_FILE_MAX_BYTES));
    const message = await refusal({
      COMMUNITY_KEY_FILE: join(dir, 'missing'),
      COMMUNITY_KEY_POINT_FILE: join(dir, 'a-directory'),
      COMMUNITY_KEY_MEDAL_FILE: join(dir, 'empty'),
      COMMUNITY_KEY_ITEM_FILE: join(dir, 'large'),
      COMMUNITY_KEY_LIVENESS_FILE: join(dir, 'just-fits'),
      SESSION_SECRET_FILE: join(dir, 'missing', 'below-a-file'),
    });
    assert.is(
      message,
      [
        'Invalid configuration:',
        `  COMMUNITY_KEY_FILE: cannot read ${dir}/missing: no such file`,
        `  COMMUNITY_KEY_POINT_FILE: cannot read ${dir}/a-directory: is a directory`,
        `  COMMUNITY_KEY_MEDAL_FILE: ${dir}/empty is empty`,
        `  COMMUNITY_KEY_ITEM_FILE: ${dir}/large is larger than 64 KiB`,
        `  SESSION_SECRET_FILE: cannot read ${dir}/missing/below-a-file: no such file`,
      ].join('\n'),
    );
  }));

test('a value read from a file is checked like the variable, and the message names the file, not the value', () =>
  withDir(async (dir) => {
    await writeFile(join(dir, 'short'), 'too-short-to-sign\n');
    await writeFile(join(dir, 'store'), 'mysql://bridge:hunter2-secret@db:3306/bridge\n');
    const message = await refusal({ SESSION_SECRET_FILE: join(dir, 'short'), EVENTSTORE_CONNECTION_STRING_FILE: join(dir, 'store') });
    assert.match(message, `SESSION_SECRET_FILE (${dir}/short): must be at least 32 characters`);
    assert.match(message, `EVENTSTORE_CONNECTION_STRING_FILE (${dir}/store): must start with postgresql://`);
    assert.not.match(message, 'too-short-to-sign');
    assert.not.match(message, 'hunter2');
  }));

test('the service refuses to start on an unreadable secret file: the message only, exit 2', () =>
  withDir(async (dir) => {
    const env = { ...process.env, DATA_DIR: dir, PORT: '0', SESSION_SECRET: undefined, SESSION_SECRET_FILE: join(dir, 'absent') };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.is(code, 2);
    assert.is(stderr, `Invalid configuration:\n  SESSION_SECRET_FILE: cannot read ${dir}/absent: no such file\n`);
  }));

test.run();
