// A SQLite log that went backwards between two runs is noticed at open (src/store/logMarker.ts):
// an older copy of the file put back, and a -wal file lost while it held commits.
import { copyFile, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LogLossError } from '../../src/store/logMarker.js';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { eventually } from '../support/eventually.js';
import { rejects } from '../support/rejects.js';

interface Context {
  dir: string;
  file: string;
  marker: string;
  warnings: string[];
  stores: SqliteEventStore[];
}

const test = suite<Context>('The log position marker');

test.before.each(async (ctx) => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'community-bridge-marker-'));
  ctx.file = join(ctx.dir, 'events.sqlite');
  ctx.marker = join(ctx.dir, 'events.position');
  ctx.warnings = [];
  ctx.stores = [];
});

test.after.each(async (ctx) => {
  for (const store of ctx.stores) await store.close();
  await rm(ctx.dir, { recursive: true, force: true });
});

function open(ctx: Context, options: { file?: string; marker?: string; acceptLogLoss?: boolean; intervalMs?: number } = {}): SqliteEventStore {
  const store = new SqliteEventStore({
    file: options.file ?? ctx.file,
    positionMarker: {
      file: options.marker ?? ctx.marker,
      acceptLogLoss: options.acceptLogLoss,
      intervalMs: options.intervalMs,
      warn: (message) => ctx.warnings.push(message),
    },
  });
  ctx.stores.push(store);
  return store;
}

async function close(ctx: Context, store: SqliteEventStore): Promise<void> {
  ctx.stores.splice(ctx.stores.indexOf(store), 1);
  await store.close();
}

const markerValue = async (file: string) => Number((await readFile(file, 'utf8')).trim());

async function appendSome(store: SqliteEventStore, stream: string, count: number): Promise<number> {
  let position = 0;
  for (let i = 0; i < count; i++) position = (await store.append(stream, [{ type: 'Appended', data: { i } }])).position;
  return position;
}

test('an older copy of the file put back is refused, naming both positions and the files; accepted, it opens and the marker moves down', async (ctx) => {
  const first = open(ctx);
  await appendSome(first, 'early', 3);
  await close(ctx, first);
  await copyFile(ctx.file, join(ctx.dir, 'older.sqlite'));
  const second = open(ctx);
  const head = await appendSome(second, 'late', 3);
  await close(ctx, second);
  assert.is(await markerValue(ctx.marker), head, 'a clean close records the head');

  await copyFile(join(ctx.dir, 'older.sqlite'), ctx.file);
  const error = await rejects(() => open(ctx), LogLossError, 'opening the store');
  assert.is(error.message.split('\n').length, 1, 'one line');
  assert.match(error.message, `ends at position 3, below position ${head} recorded in ${ctx.marker}`);
  assert.match(error.message, ctx.file);
  assert.match(error.message, /--accept-log-loss/);

  const accepted = open(ctx, { acceptLogLoss: true });
  assert.is(ctx.warnings.length, 1);
  assert.match(ctx.warnings[0]!, `after position 3 in ${ctx.file}`);
  assert.is(await markerValue(ctx.marker), 3);
  const next = await accepted.append('again', [{ type: 'Appended', data: {} }]);
  await close(ctx, accepted);
  assert.is(await markerValue(ctx.marker), next.position);
  await close(ctx, open(ctx)); // and it opens without the flag from then on
});

test('a -wal file lost while it held commits is refused (a copy of the database file alone, taken while the store ran)', async (ctx) => {
  const first = open(ctx);
  await appendSome(first, 'checkpointed', 2);
  await close(ctx, first); // the last connection folds the -wal into the file
  const running = open(ctx, { intervalMs: 10 });
  const head = await appendSome(running, 'in-the-wal', 4);
  await eventually(async () => (await markerValue(ctx.marker)) >= head, 'the marker to follow the appends');
  const copy = await mkdtemp(join(tmpdir(), 'community-bridge-marker-copy-'));
  try {
    // What a crude file copy or a lost -wal leaves: the database file as the last checkpoint wrote it.
    await copyFile(ctx.file, join(copy, 'events.sqlite'));
    await copyFile(ctx.marker, join(copy, 'events.position'));
    assert.not.ok((await readdir(copy)).includes('events.sqlite-wal'));
    const error = await rejects(() => open(ctx, { file: join(copy, 'events.sqlite'), marker: join(copy, 'events.position') }), LogLossError, 'opening the copy');
    assert.match(error.message, `ends at position 2, below position ${head}`);
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
});

// How often it is written (at most once per interval) is a matter of time, which no test asserts.
test('the marker is written off the appends’ path: an acknowledged append leaves it behind, its interval brings it up; it is private', async (ctx) => {
  const waiting = open(ctx, { intervalMs: 3_600_000 });
  assert.is(await markerValue(ctx.marker), 0, 'written at open');
  const acknowledged = await appendSome(waiting, 's', 5);
  assert.is(await markerValue(ctx.marker), 0, 'no append waited for the marker');
  await close(ctx, waiting);
  assert.is(await markerValue(ctx.marker), acknowledged, 'a clean close records the head');

  const following = open(ctx, { intervalMs: 50 });
  const head = await appendSome(following, 's', 4);
  await eventually(async () => (await markerValue(ctx.marker)) >= head, 'the marker to follow the appends within its interval');
  assert.is(await markerValue(ctx.marker), head);
  assert.is((await stat(ctx.marker)).mode & 0o777, 0o600);
  assert.equal(
    (await readdir(ctx.dir)).filter((name) => name.endsWith('.tmp')),
    [],
    'no temporary file left behind',
  );
});

test('a marker that holds no position is refused unless accepted', async (ctx) => {
  const store = open(ctx);
  await appendSome(store, 's', 2);
  await close(ctx, store);
  await writeFile(ctx.marker, 'garbage');
  const error = await rejects(() => open(ctx), LogLossError, 'opening the store');
  assert.match(error.message, `${ctx.marker} does not hold a log position`);
  open(ctx, { acceptLogLoss: true });
  assert.is(await markerValue(ctx.marker), 2);
  assert.is(ctx.warnings.length, 1);
});

test('no marker yet (a first run, or a store from before markers): the head is recorded', async (ctx) => {
  const plain = new SqliteEventStore({ file: ctx.file });
  await appendSome(plain, 's', 3);
  await plain.close();
  open(ctx);
  assert.is(await markerValue(ctx.marker), 3);
  assert.equal(ctx.warnings, []);
});

test.run();
