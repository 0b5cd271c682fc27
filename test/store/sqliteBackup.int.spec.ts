// `store backup` (src/store/sqliteBackup.ts): a consistent copy of a file that is being written
// meanwhile, by this process's writer thread and by another process.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BackupRefusedError, backupSqliteStore } from '../../src/store/sqliteBackup.js';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { eventually } from '../support/eventually.js';
import { rejects } from '../support/rejects.js';
import { assertConsistentPrefix } from './consistentPrefix.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const appender = fileURLToPath(new URL('./fixtures/append-until-stopped.ts', import.meta.url));

const test = suite<{ dir: string; file: string }>('Backing up a SQLite store');

test.before.each(async (ctx) => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'community-bridge-backup-'));
  ctx.file = join(ctx.dir, 'events.sqlite');
});

test.after.each(async (ctx) => {
  await rm(ctx.dir, { recursive: true, force: true });
});

async function fill(file: string, events: number): Promise<void> {
  const store = new SqliteEventStore({ file });
  for (let i = 0; i < events; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, k) => store.append(`filled-${k % 50}`, [{ type: 'Filled', data: { i: i + k, pad: 'f'.repeat(300) } }])));
  }
  await store.close();
}

test('a copy taken while this process appends is a consistent prefix, however often SQLite starts it over', async (ctx) => {
  await fill(ctx.file, 3000);
  const store = new SqliteEventStore({ file: ctx.file });
  let appending = true;
  let appended = 0;
  const writes = (async () => {
    while (appending) {
      await Promise.all(
        Array.from({ length: 4 }, (_, k) =>
          store.append(`running-${k}`, [
            { type: 'Ran', data: {} },
            { type: 'Ran', data: {} },
          ]),
        ),
      );
      appended += 4;
    }
  })();
  const steps: number[] = [];
  try {
    await eventually(() => appended >= 8, { what: 'the appends to start', everyMs: 5 });
    const target = join(ctx.dir, 'backup.sqlite');
    // Besides the appends, whose commits may or may not fall between two steps: one that does.
    const other = new Database(ctx.file);
    const result = await backupSqliteStore(ctx.file, target, {
      pagesPerStep: 2,
      onProgress: ({ copiedPages }) => {
        steps.push(copiedPages);
        if (steps.length === 5)
          other.prepare("INSERT INTO events (stream, revision, type, data, created) VALUES ('between-steps', 0, 'Wrote', '{}', '2024-01-01T00:00:00.000Z')").run();
      },
    });
    other.close();
    appending = false;
    await writes;
    assert.ok(
      steps.some((copied, i) => i > 0 && copied <= steps[i - 1]!),
      `SQLite started the copy over at least once (pages copied after each step: ${steps.join(' ')})`,
    );
    const head = assertConsistentPrefix(target);
    assert.is(result.head, head);
    assert.ok(head >= 3000, `the copy holds the log as it was: head ${head}`);
    assert.is(result.bytes, (await stat(target)).size);
    assert.is((await stat(target)).mode & 0o777, 0o600, 'the copy is private like the log');
    assert.not.ok(existsSync(`${target}.partial`));
  } finally {
    appending = false;
    await writes;
    await store.close();
  }
});

test('a copy taken while another process appends is a consistent prefix', async (ctx) => {
  await fill(ctx.file, 1000);
  const child = spawn(process.execPath, ['--import', 'tsx', appender, ctx.file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`the appender exited with ${child.exitCode}: ${err}`);
        return out.includes('appending');
      },
      { what: () => `the appender to start: ${err}`, timeoutMs: 20_000 },
    );
    const target = join(ctx.dir, 'backup.sqlite');
    const result = await backupSqliteStore(ctx.file, target, { pagesPerStep: 8 });
    assert.is(assertConsistentPrefix(target), result.head);
  } finally {
    child.kill('SIGTERM');
    assert.is(await exited, 0, err);
  }
  assert.ok(Number(out.split('\n').filter(Boolean).at(-1)) > 0);
});

test('an existing target is kept unless forced; a forced copy replaces it and its stale -wal', async (ctx) => {
  await fill(ctx.file, 500);
  const target = join(ctx.dir, 'backup.sqlite');
  await writeFile(target, 'precious');
  const refused = await rejects(backupSqliteStore(ctx.file, target), BackupRefusedError, 'a copy onto an existing target');
  assert.match(refused.message, `${target} exists already: pass --force to replace it`);
  assert.is(await readFile(target, 'utf8'), 'precious', 'the target is kept');
  await writeFile(`${target}-wal`, 'a stale write-ahead log of another database');
  const result = await backupSqliteStore(ctx.file, target, { force: true });
  assert.is(result.head, 500);
  assert.not.ok(existsSync(`${target}-wal`));
  assert.is(assertConsistentPrefix(target), 500);
});

test.run();
