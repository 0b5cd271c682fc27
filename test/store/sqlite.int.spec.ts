// The SQLite adapter on real files: the shared contract, then what only an embedded store has to
// get right (reopening, another process writing, group commit, a batch the database fails, the
// schema of a file an older version made).
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConcurrencyError } from '../../src/domain/errors.js';
import type { AppendResult, RecordedEvent } from '../../src/store/port.js';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { eventually } from '../support/eventually.js';
import { rejects } from '../support/rejects.js';
import { eventStoreContract } from './contract.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const otherProcessScript = fileURLToPath(new URL('./fixtures/append-from-other-process.ts', import.meta.url));

async function tempDatabase(): Promise<{ file: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-store-'));
  return { file: join(dir, 'events.db'), remove: () => rm(dir, { recursive: true, force: true }) };
}

function appendFromOtherProcess(file: string, stream: string): Promise<AppendResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', otherProcessScript, file, stream], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(out));
      else reject(new Error(`the other process exited with ${code}: ${err}`));
    });
  });
}

eventStoreContract('SqliteEventStore contract', async () => {
  const db = await tempDatabase();
  const store = new SqliteEventStore({ file: db.file });
  return {
    store,
    async cleanup() {
      await store.close();
      await db.remove();
    },
  };
}).run();

const sqlite = suite<{ file: string; remove(): Promise<void>; stores: SqliteEventStore[] }>('SqliteEventStore on a file');

sqlite.before.each(async (ctx) => {
  Object.assign(ctx, await tempDatabase());
  ctx.stores = [];
});

sqlite.after.each(async (ctx) => {
  for (const store of ctx.stores) await store.close();
  await ctx.remove();
});

const open = (ctx: { file: string; stores: SqliteEventStore[] }, options: Omit<ConstructorParameters<typeof SqliteEventStore>[0], 'file'> = {}) => {
  const store = new SqliteEventStore({ file: ctx.file, ...options });
  ctx.stores.push(store);
  return store;
};

/** The events of the given streams as a fresh connection reads them from the file. */
function onDisk(file: string, streams: string[]): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare<[string], { stream: string; type: string }>('SELECT stream, type FROM events WHERE stream IN (SELECT value FROM json_each(?)) ORDER BY position')
      .all(JSON.stringify(streams))
      .map((row) => `${row.stream}:${row.type}`);
  } finally {
    db.close();
  }
}

sqlite('data survives closing and reopening the file', async (ctx) => {
  const first = open(ctx);
  await first.append('user-1', [{ type: 'Registered', data: { name: 'ada' }, metadata: { by: 'test' } }]);
  const last = await first.append('user-1', [{ type: 'Renamed', data: { name: 'ada l.' } }]);
  await first.close();

  const reopened = open(ctx);
  const events = await reopened.readStream('user-1');
  assert.equal(
    events.map((e) => [e.revision, e.type, e.data, e.metadata]),
    [
      [0, 'Registered', { name: 'ada' }, { by: 'test' }],
      [1, 'Renamed', { name: 'ada l.' }, undefined],
    ],
  );
  const next = await reopened.append('user-1', [{ type: 'Renamed', data: { name: 'ada lovelace' } }], { expectedRevision: 1 });
  assert.is(next.nextExpectedRevision, 2);
  assert.ok(next.position > last.position, 'positions go on from where they were');
});

// How soon it arrives is bench/'s business; here: it arrives with nothing appended here to prompt a read.
sqlite('an append by another process reaches a subscriber here', async (ctx) => {
  const store = open(ctx);
  await store.append('warmup-1', [{ type: 'Warm', data: {} }]);
  const stream = `cli-${randomUUID()}`;
  let received: RecordedEvent | undefined;
  const subscription = store.subscribeToAll({
    after: 0,
    onEvent: (event) => {
      if (event.streamName === stream) received = event;
    },
  });
  try {
    const appended = await appendFromOtherProcess(ctx.file, stream);
    const event = await eventually(() => received, 'the other process’s event to reach the subscriber');
    assert.is(event.position, appended.position);
    assert.is(event.type, 'AppendedElsewhere');
  } finally {
    await subscription.unsubscribe();
  }
});

sqlite("another connection's append is delivered even when an append here fails meanwhile", async (ctx) => {
  // Committing a batch must not re-read PRAGMA data_version: that would swallow a change made by
  // another connection just before, and with nothing appended here to trigger a read, the other
  // connection's event would never be delivered.
  const here = open(ctx);
  const elsewhere = open(ctx);
  await here.append('existing-1', [{ type: 'Created', data: {} }]);
  const delivered: string[] = [];
  const subscription = here.subscribeToAll({ after: 0, onEvent: (e) => delivered.push(e.streamName) });
  try {
    await eventually(() => delivered.length === 1, 'catch-up to deliver the first event');
    await elsewhere.append('elsewhere-1', [{ type: 'Created', data: {} }]);
    await rejects(here.append('existing-1', [{ type: 'Created', data: {} }], { expectedRevision: 'no_stream' }), ConcurrencyError);
    await eventually(() => delivered.includes('elsewhere-1'), 'the other connection’s event to be delivered');
  } finally {
    await subscription.unsubscribe();
  }
});

sqlite('500 appends in one tick all succeed with distinct positions', async (ctx) => {
  const store = open(ctx);
  const streams = Array.from({ length: 500 }, (_, i) => `many-${i}`);
  const results = await Promise.all(streams.map((s, i) => store.append(s, [{ type: 'Appended', data: { i } }], { expectedRevision: 'no_stream' })));
  assert.ok(results.every((r) => r.nextExpectedRevision === 0));
  assert.is(new Set(results.map((r) => r.position)).size, 500);
  const all = await store.readAll({ after: 0, limit: 1000 });
  assert.equal(all.map((e) => e.streamName).sort(), [...streams].sort());
  assert.equal(
    all.map((e) => e.position),
    results.map((r) => r.position).sort((a, b) => a - b),
  );
});

sqlite('a conflicting append inside a batch fails alone', async (ctx) => {
  const store = open(ctx);
  await store.append('taken-1', [{ type: 'Created', data: {} }]);
  const outcomes = await Promise.allSettled([
    store.append('free-1', [{ type: 'Created', data: {} }], { expectedRevision: 'no_stream' }),
    store.append('taken-1', [{ type: 'Changed', data: {} }], { expectedRevision: 5 }),
    store.append('free-2', [{ type: 'Created', data: {} }], { expectedRevision: 'no_stream' }),
    // Depends on the first append of this same batch.
    store.append('free-1', [{ type: 'Changed', data: {} }], { expectedRevision: 0 }),
  ]);
  assert.equal(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.instance((outcomes[1] as PromiseRejectedResult).reason, ConcurrencyError);
  assert.equal(
    (await store.readStream('taken-1')).map((e) => e.type),
    ['Created'],
  );
  assert.equal(
    (await store.readStream('free-1')).map((e) => e.type),
    ['Created', 'Changed'],
  );
});

sqlite('an append whose data cannot be stored fails alone inside a batch', async (ctx) => {
  const store = open(ctx);
  const outcomes = await Promise.allSettled([
    store.append('fine-1', [{ type: 'Created', data: {} }]),
    store.append('broken-1', [
      { type: 'Created', data: {} },
      { type: 'Broken', data: { n: 1n } },
    ]),
    store.append('fine-2', [{ type: 'Created', data: {} }]),
  ]);
  assert.equal(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.equal(await store.readStream('broken-1'), [], 'nothing of the failed append was written');
  assert.is((await store.readAll({ after: 0, limit: 10 })).length, 2);
});

sqlite('an insert the database refuses fails its own append alone inside a batch, a one-event append included', async (ctx) => {
  const store = open(ctx);
  await store.append('warm', [{ type: 'Warm', data: {} }]);
  const db = new Database(ctx.file);
  db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.type = 'Refused' BEGIN SELECT RAISE(ABORT, 'refused'); END;`);
  db.close();
  const outcomes = await Promise.allSettled([
    store.append('a', [{ type: 'Fine', data: {} }]),
    store.append('b', [{ type: 'Refused', data: {} }], { expectedRevision: 'no_stream' }),
    store.append('c', [
      { type: 'Fine', data: {} },
      { type: 'Refused', data: {} },
    ]),
    store.append('b', [{ type: 'Fine', data: {} }], { expectedRevision: 'no_stream' }),
  ]);
  assert.equal(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
  );
  assert.equal(await store.readStream('c'), [], 'nothing of the refused two-event append');
  assert.equal(
    (await store.readStream('b')).map((e) => e.type),
    ['Fine'],
    'the refused one-event append left nothing behind',
  );
});

sqlite('a batch the database cannot hold (disk full) fails whole: every append rejected, none of it on disk; the store goes on', async (ctx) => {
  const setup = open(ctx);
  await setup.append('before', [{ type: 'Written', data: {} }]);
  await setup.close();
  const pages = (() => {
    const db = new Database(ctx.file);
    try {
      return db.pragma('page_count', { simple: true }) as number;
    } finally {
      db.close();
    }
  })();
  // Room for small events in the pages there are, not for the overflow pages of a large one.
  const store = open(ctx, { maxPageCount: pages + 2 });
  const small = (type: string) => [{ type, data: { note: 'fits' } }];
  const batch = [
    store.append('first', small('Small'), { expectedRevision: 'no_stream' }),
    store.append('second', [...small('Small'), ...small('Small')]),
    store.append('large', [{ type: 'Large', data: { blob: 'x'.repeat(256 * 1024) } }]),
    store.append('after', small('Small')),
    store.append('fenced', small('Small'), { alongside: { streamName: 'before', expectedRevision: 0, events: small('Checked') } }),
  ];
  const outcomes = await Promise.allSettled(batch);
  assert.equal(
    outcomes.map((o) => o.status),
    ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
    'every append of the batch fails',
  );
  for (const outcome of outcomes) {
    const error = (outcome as PromiseRejectedResult).reason as Error & { code?: string };
    assert.match(error.message, /full/);
    assert.is(error.code, 'SQLITE_FULL');
  }
  assert.equal(onDisk(ctx.file, ['first', 'second', 'large', 'after', 'fenced', 'before']), ['before:Written'], 'nothing of the batch is in the file');
  assert.equal(await store.readStream('first'), []);

  const fits = await store.append('first', small('Small'), { expectedRevision: 'no_stream' });
  assert.is(fits.nextExpectedRevision, 0, 'an append that fits goes on succeeding');
  await store.close();

  const reopened = open(ctx);
  await reopened.append('large', [{ type: 'Large', data: { blob: 'x'.repeat(256 * 1024) } }]);
  assert.equal(onDisk(ctx.file, ['first', 'large', 'before']), ['before:Written', 'first:Small', 'large:Large'], 'with room again, so does a large one');
});

sqlite('events are stamped by the clock the store is given', async (ctx) => {
  const store = open(ctx, { clock: () => '2031-02-03T04:05:06.789Z' });
  const delivered: RecordedEvent[] = [];
  const subscription = store.subscribeToAll({ after: 0, onEvent: (e) => delivered.push(e) });
  try {
    await store.append('stamped', [{ type: 'Stamped', data: {} }]);
    assert.equal(
      (await store.readStream('stamped')).map((e) => e.created),
      ['2031-02-03T04:05:06.789Z'],
    );
    await eventually(() => delivered.length === 1, 'the event to be delivered');
    assert.is(delivered[0]!.created, '2031-02-03T04:05:06.789Z', 'subscribers get the same stamp');
  } finally {
    await subscription.unsubscribe();
  }
});

sqlite('a file an older version made (events only) gets the nodes table at open and keeps its events', async (ctx) => {
  const old = new Database(ctx.file);
  old.pragma('journal_mode = WAL');
  old.exec(`
    CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, stream TEXT NOT NULL, revision INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT, created TEXT NOT NULL);
    CREATE UNIQUE INDEX events_stream_revision ON events (stream, revision);
    INSERT INTO events (stream, revision, type, data, metadata, created) VALUES ('user-1', 0, 'Registered', '{}', NULL, '2024-01-01T00:00:00.000Z');
  `);
  old.close();
  const store = open(ctx);
  assert.equal(
    (await store.readStream('user-1')).map((e) => e.type),
    ['Registered'],
  );
  const mine = { node: 'node-a', instance: 'i-1', started: '2024-01-01T00:00:00.000Z', clockMs: 1, count: 1 };
  assert.equal(await store.beat(mine), { beats: [mine], storeClockMs: undefined });
});

sqlite('two stores on one file (two processes) read each other’s beats', async (ctx) => {
  const [here, there] = [open(ctx), open(ctx)];
  const a = { node: 'node-a', instance: 'a-1', started: '2024-01-01T00:00:00.000Z', clockMs: 10, count: 1 };
  const b = { node: 'node-b', instance: 'b-1', started: '2024-01-01T00:00:01.000Z', clockMs: 20, count: 1 };
  await here.beat(a);
  assert.equal((await there.beat(b)).beats, [a, b]);
  assert.equal((await here.beat({ ...a, count: 2 })).beats, [{ ...a, count: 2 }, b]);
  assert.equal((await there.beat({ ...b, count: 2 }, ['a-1'])).beats, [{ ...b, count: 2 }]);
});

sqlite('appends in one batch see each other’s revisions, alongside streams included', async (ctx) => {
  const store = open(ctx);
  await store.append('claim-1', [{ type: 'Claimed', data: {} }]);
  const outcomes = await Promise.allSettled([
    store.append('work-1', [{ type: 'Done', data: {} }], { alongside: { streamName: 'claim-1', expectedRevision: 0, events: [{ type: 'Progressed', data: {} }] } }),
    store.append('claim-1', [{ type: 'Progressed', data: {} }], { expectedRevision: 1 }),
    store.append('work-2', [{ type: 'Done', data: {} }], { alongside: { streamName: 'claim-1', expectedRevision: 2, events: [] } }),
    store.append('work-3', [{ type: 'Done', data: {} }], { alongside: { streamName: 'claim-1', expectedRevision: 0, events: [] } }),
  ]);
  assert.equal(
    outcomes.map((o) => o.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'rejected'],
  );
  assert.is((outcomes[0] as PromiseFulfilledResult<AppendResult>).value.alongsideRevision, 1);
  assert.is((outcomes[2] as PromiseFulfilledResult<AppendResult>).value.alongsideRevision, 2);
  const conflict = (outcomes[3] as PromiseRejectedResult).reason as ConcurrencyError;
  assert.instance(conflict, ConcurrencyError);
  assert.equal([conflict.streamName, conflict.expected, conflict.actual], ['claim-1', 0, 2]);
});

sqlite('appends made over many turns of the event loop, none awaited, commit in the order made, each seeing the one before', async (ctx) => {
  const store = open(ctx);
  const delivered: RecordedEvent[] = [];
  const subscription = store.subscribeToAll({ after: 0, onEvent: (e) => delivered.push(e) });
  try {
    // One append per turn while the writer commits the first ones: they reach it as several
    // batches, which it may commit together.
    const appended: Array<Promise<AppendResult>> = [];
    for (let k = 0; k < 40; k++) {
      appended.push(store.append('chain', [{ type: 'Linked', data: { k } }], { expectedRevision: k === 0 ? 'no_stream' : k - 1 }));
      appended.push(store.append(`side-${k}`, [{ type: 'Alone', data: { k } }], { expectedRevision: 'no_stream' }));
      await new Promise((turn) => setImmediate(turn));
    }
    const results = await Promise.all(appended);
    const chain = results.filter((_, i) => i % 2 === 0);
    assert.equal(
      chain.map((r) => r.nextExpectedRevision),
      Array.from({ length: 40 }, (_, k) => k),
    );
    const positions = results.map((r) => r.position);
    assert.equal(
      positions,
      [...positions].sort((a, b) => a - b),
      'positions in the order the appends were made',
    );
    await eventually(() => delivered.length === 80, 'every event to be delivered');
    assert.equal(
      delivered.map((e) => e.position),
      positions,
    );
    assert.equal(
      (await store.readStream('chain')).map((e) => (e.data as { k: number }).k),
      Array.from({ length: 40 }, (_, k) => k),
    );
  } finally {
    await subscription.unsubscribe();
  }
});

sqlite('a few appends made while two batches are out commit once one is answered', async (ctx) => {
  const store = open(ctx);
  const burst = (turn: number) => Array.from({ length: 300 }, (_, i) => store.append(`burst-${turn}-${i}`, [{ type: 'Burst', data: { i } }]));
  const first = burst(1);
  await new Promise((turn) => setImmediate(turn));
  const second = burst(2);
  await new Promise((turn) => setImmediate(turn));
  // Two batches out and nothing after this one: it may wait for a reply, never longer.
  const last = await store.append('last', [{ type: 'Last', data: {} }], { expectedRevision: 'no_stream' });
  assert.is(last.nextExpectedRevision, 0);
  const positions = (await Promise.all([...first, ...second])).map((r) => r.position);
  assert.ok(
    positions.every((p) => p < last.position),
    'the last append committed after both batches',
  );
});

sqlite('a reply that arrives during a busy turn of I/O is taken at that turn end, before the next poll for I/O', async (ctx) => {
  const store = open(ctx);
  await store.append('warm', [{ type: 'Warm', data: {} }]);
  const reader = new Database(ctx.file, { readonly: true });
  const committed = reader.prepare<[], { n: number }>("SELECT count(*) AS n FROM events WHERE stream = 'early'");
  let earlyDone = false;
  let early: Promise<AppendResult> | undefined;
  let late: Promise<AppendResult> | undefined;
  // A socket's callback, as a request's: the writer's reply lands during it, so its message is
  // polled for only after the loop's check phase.
  const atTurnEnd = await new Promise<boolean>((checked) => {
    const server = createServer((socket) => {
      socket.once('data', async () => {
        early = store.append('early', [{ type: 'Early', data: {} }]).then((result) => {
          earlyDone = true;
          return result;
        });
        await Promise.resolve(); // the idle writer got it at the end of the callback's job
        const until = Date.now() + 10_000;
        while (committed.get()!.n === 0 && Date.now() < until) {}
        // The reply is posted right after the commit; the margin covers a descheduled writer.
        const answered = Date.now() + 250;
        while (Date.now() < answered) {}
        late = store.append('late', [{ type: 'Late', data: {} }]);
        // Queued after the store's own end-of-turn flush.
        setImmediate(() => checked(earlyDone));
        socket.destroy();
        server.close();
      });
    });
    server.listen(0, '127.0.0.1', () => connect((server.address() as AddressInfo).port, '127.0.0.1').end('x'));
  });
  reader.close();
  assert.ok(atTurnEnd, 'the early append was answered at the end of the turn its reply arrived in');
  assert.is((await early!).nextExpectedRevision, 0);
  assert.is((await late!).nextExpectedRevision, 0);
});

sqlite('a scan in pages reads the same log with the next page read ahead, and sees appends and deletions made between pages', async (ctx) => {
  const store = open(ctx);
  for (let batch = 0; batch < 5; batch++) {
    await Promise.all(Array.from({ length: 500 }, (_, i) => store.append(`s-${batch}-${i % 50}`, [{ type: 'Filled', data: { batch, i } }])));
  }
  const scan = async () => {
    const seen: RecordedEvent[] = [];
    for (;;) {
      const page = await store.readAll({ after: seen.at(-1)?.position ?? 0, limit: 1000 });
      seen.push(...page);
      if (page.length < 1000) return seen;
    }
  };
  const once = await scan();
  assert.is(once.length, 2500);
  assert.equal(
    once.map((e) => e.position),
    [...once.map((e) => e.position)].sort((a, b) => a - b),
  );

  // Page one read (page two is being read ahead), then the log changes before page two is asked for.
  const first = await store.readAll({ after: 0, limit: 1000 });
  await store.deleteStreams(['s-3-0']);
  await store.append('late', [{ type: 'Late', data: {} }]);
  const rest: RecordedEvent[] = [];
  for (let after = first.at(-1)!.position; ; ) {
    const page = await store.readAll({ after, limit: 1000 });
    rest.push(...page);
    if (page.length < 1000) break;
    after = page.at(-1)!.position;
  }
  assert.ok(!rest.some((e) => e.streamName === 's-3-0'), 'a stream deleted between pages is not read from a page read before');
  assert.is(rest.at(-1)!.type, 'Late', 'an append made between pages is read');
  assert.is(first.length + rest.length, 2500 - 10 + 1);
});

sqlite.run();
