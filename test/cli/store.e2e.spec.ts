// `cli store check`, `cli store backup` and `--accept-log-loss`, as an operator runs them: child
// processes on a data directory, some while another process appends to it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { assertConsistentPrefix } from '../store/consistentPrefix.js';
import { eventually } from '../support/eventually.js';
import { runToEnd } from '../support/serviceProcess.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const appender = fileURLToPath(new URL('../store/fixtures/append-until-stopped.ts', import.meta.url));

/** An entry point to its end on the SQLite store, whatever store this process was pointed at. */
const run = (args: string[], env: Record<string, string> = {}, entry?: string) => runToEnd(args, { EVENTSTORE_CONNECTION_STRING: '', ...env }, entry);
const cli = (dataDir: string, ...args: string[]) => run([...args, '--data-dir', dataDir]);

/** A data directory whose log holds `events` events, written as the service writes them (with its marker). */
async function dataDirWith(events: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-cli-store-'));
  const store = new SqliteEventStore({ file: join(dir, 'events.sqlite'), positionMarker: { file: join(dir, 'events.position') } });
  for (let i = 0; i < events; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, events - i) }, (_, k) => store.append(`filled-${k % 20}`, [{ type: 'Filled', data: { i: i + k, pad: 'f'.repeat(200) } }])),
    );
  }
  await store.close();
  return dir;
}

const dirs: string[] = [];
const test = suite('cli store');
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function tracked(dir: Promise<string>): Promise<string> {
  dirs.push(await dir);
  return dirs.at(-1)!;
}

test('store check prints ok and exits 0 on a sound store', async () => {
  const dir = await tracked(dataDirWith(300));
  const result = await cli(dir, 'store', 'check');
  assert.is(result.code, 0, result.stderr);
  assert.is(result.stdout, 'ok\n');
  assert.is(result.stderr, `Store: SQLite file ${join(dir, 'events.sqlite')}\n`);
});

test('store check finds a damaged page, prints the problems naming the file and exits 1', async () => {
  const dir = await tracked(dataDirWith(2000));
  const damaged = await tracked(mkdtemp(join(tmpdir(), 'community-bridge-cli-damaged-')));
  const file = join(damaged, 'events.sqlite');
  await copyFile(join(dir, 'events.sqlite'), file);
  const { size } = await stat(file);
  const handle = await open(file, 'r+');
  try {
    // A page in the middle of the file overwritten with garbage, as a failing disk might.
    const page = 4096;
    await handle.write(Buffer.alloc(page, 0xa5), 0, page, Math.floor(size / page / 2) * page);
  } finally {
    await handle.close();
  }
  const result = await cli(damaged, 'store', 'check');
  assert.is(result.code, 1, result.stdout + result.stderr);
  const lines = result.stdout.split('\n').filter(Boolean);
  assert.ok(lines.length >= 1);
  for (const line of lines) assert.ok(line.startsWith(`${file}: `), line);
  assert.not.match(result.stdout + result.stderr, /\n\s+at /, 'no stack trace');
});

test('store backup while another process appends: a consistent prefix, its size and position printed; an existing file is kept unless --force', async () => {
  const dir = await tracked(dataDirWith(1000));
  const child = spawn(process.execPath, ['--import', 'tsx', appender, join(dir, 'events.sqlite')], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const target = join(dir, 'backup.sqlite');
  try {
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`the appender exited with ${child.exitCode}`);
        return out.includes('appending');
      },
      { what: 'the appender to start', timeoutMs: 20_000 },
    );
    const result = await cli(dir, 'store', 'backup', target);
    assert.is(result.code, 0, result.stderr);
    const printed = /^Backed up (\S+) to (\S+): (\d+) bytes, up to log position (\d+)\n$/.exec(result.stdout);
    assert.ok(printed, result.stdout);
    assert.is(printed![1], join(dir, 'events.sqlite'));
    assert.is(printed![2], target);
    assert.is(Number(printed![3]), (await stat(target)).size);
    assert.is(assertConsistentPrefix(target), Number(printed![4]));
    assert.ok(Number(printed![4]) >= 1000);

    const again = await cli(dir, 'store', 'backup', target);
    assert.is(again.code, 1);
    assert.is(again.stderr.split('\n').filter(Boolean).at(-1), `Cannot back up ${join(dir, 'events.sqlite')}: ${target} exists already: pass --force to replace it`);
    const forced = await cli(dir, 'store', 'backup', target, '--force');
    assert.is(forced.code, 0, forced.stderr);
    assert.ok(assertConsistentPrefix(target) >= Number(printed![4]), 'the newer copy replaced the older one');
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

test('with EVENTSTORE_CONNECTION_STRING, store check and store backup say in one line that they are for SQLite, exit 2', async () => {
  for (const args of [
    ['store', 'check'],
    ['store', 'backup', join(tmpdir(), 'never-written.sqlite')],
  ]) {
    const result = await run(args, { EVENTSTORE_CONNECTION_STRING: 'esdb://admin:changeit@localhost:2113?tls=false' });
    assert.is(result.code, 2, result.stderr);
    const [store, message, ...more] = result.stderr.split('\n').filter(Boolean);
    assert.is(store, 'Store: EventStoreDB at esdb://admin:***@localhost:2113?tls=false');
    assert.match(
      message!,
      /^store (check|backup) applies to the embedded SQLite store; EventStoreDB at esdb:\/\/admin:\*\*\*@localhost:2113\?tls=false is checked and backed up with the server's own tooling$/,
    );
    assert.equal(more, []);
  }
  assert.not.ok(existsSync(join(tmpdir(), 'never-written.sqlite')));
});

/** A data directory whose log is an older copy (100 events) of what its marker saw (101). */
async function olderCopyPutBack(): Promise<{ dir: string; file: string }> {
  const dir = await tracked(dataDirWith(100));
  const file = join(dir, 'events.sqlite');
  await copyFile(file, join(dir, 'older.sqlite'));
  const store = new SqliteEventStore({ file, positionMarker: { file: join(dir, 'events.position') } });
  await store.append('later-1', [{ type: 'Later', data: {} }]);
  await store.close();
  await copyFile(join(dir, 'older.sqlite'), file);
  return { dir, file };
}

test('an older copy of the log put back: the CLI and the service refuse it in one line, and open it with --accept-log-loss', async () => {
  const { dir, file } = await olderCopyPutBack();
  const loss = `The event log in ${file} ends at position 100, below position 101 recorded in ${join(dir, 'events.position')}`;

  const refused = await cli(dir, 'events');
  assert.is(refused.code, 1);
  const lines = refused.stderr.split('\n').filter(Boolean);
  assert.is(lines.length, 2, refused.stderr);
  assert.ok(lines[1]!.startsWith(`Cannot open the event store (SQLite file ${file}): ${loss}`), lines[1]);

  const service = await run([], { DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info' }, 'src/main.ts');
  assert.is(service.code, 1, service.stderr);
  assert.is(service.stderr.split('\n').filter(Boolean).length, 1, service.stderr);
  assert.match(service.stderr, loss);

  const checked = await cli(dir, 'store', 'check');
  assert.is(checked.code, 1);
  assert.match(checked.stdout, `${file}: the log ends at position 100, below position 101 recorded in ${join(dir, 'events.position')}`);

  const accepted = await cli(dir, 'events', '--accept-log-loss');
  assert.is(accepted.code, 0, accepted.stderr);
  assert.match(accepted.stderr, `Warning: Accepted the loss of the events after position 100 in ${file}`);
  assert.is((await cli(dir, 'store', 'check')).stdout, 'ok\n', 'the marker was moved down to the log');
});

test('the service starts on a log that lost events when given --accept-log-loss', async () => {
  const { dir, file } = await olderCopyPutBack();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--accept-log-loss'], {
    cwd: root,
    env: { ...process.env, EVENTSTORE_CONNECTION_STRING: '', DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${stderr}`);
        return stdout.includes('"msg":"listening"');
      },
      { what: () => `the service to listen:\n${stderr}`, timeoutMs: 30_000 },
    );
    assert.match(stderr, `Warning: Accepted the loss of the events after position 100 in ${file}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

test.run();
