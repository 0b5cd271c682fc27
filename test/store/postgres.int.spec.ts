// The PostgreSQL adapter against a real server (a throwaway cluster, test/support/postgres.ts):
// the shared contract, then what only a server store has to get right: the schema made once
// when several nodes start together, a schema newer than the build, an append over the bound,
// live delivery by notification and by the poll, retention that keeps the head, a subscription
// that outlives its connections and a server restart, and TLS. Without
// PostgreSQL's binaries on the machine every test here is counted as skipped, with the reason on
// one line.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConcurrencyError, RecordTooLargeError } from '../../src/domain/errors.js';
import { PostgresEventStore, MAX_APPEND_BYTES } from '../../src/store/postgres.js';
import { BATCHES_IN_FLIGHT, MIN_SPLIT_APPENDS } from '../../src/store/postgresAppender.js';
import { APPEND_LOCK, MIGRATION_LOCK, SCHEMA_VERSION } from '../../src/store/postgresSchema.js';
import { SubscriptionInterruptedError, type EventStore, type RecordedEvent } from '../../src/store/port.js';
import { resumingStore } from '../../src/store/resuming.js';
import { eventually } from '../support/eventually.js';
import { postgresBinaries, startCluster, type PostgresCluster } from '../support/postgres.js';
import { rejects } from '../support/rejects.js';
import { eventStoreContract, skippedEventStoreContract } from './contract.js';

const CONTRACT = 'PostgresEventStore contract';
const server = suite<{ cluster: PostgresCluster; open: EventStore[] }>('PostgresEventStore on a real server');
const SERVER_TESTS: Record<string, (ctx: { cluster: PostgresCluster; open: EventStore[] }) => Promise<void>> = {};

const ids = (events: RecordedEvent[]) => events.map((e) => `${e.streamName}@${e.revision}`);

SERVER_TESTS['nodes starting together make the schema once; a later start finds it current'] = async ({ cluster, open }) => {
  const connectionString = await cluster.connectionStringFor('together');
  const stores = await Promise.all(Array.from({ length: 6 }, () => PostgresEventStore.open({ connectionString })));
  open.push(...stores);
  const versions = await cluster.sql<{ version: number }>('SELECT version FROM schema_version ORDER BY version', [], 'together');
  assert.equal(
    versions.map((row) => row.version),
    Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
    'each migration recorded once',
  );
  const results = await Promise.all(stores.map((store, i) => store.append(`start-${i}`, [{ type: 'Started', data: { i } }])));
  assert.is(new Set(results.map((r) => r.position)).size, 6);
  const again = await PostgresEventStore.open({ connectionString });
  open.push(again);
  assert.is((await again.readAll({ after: 0, limit: 10 })).length, 6, 'a later start keeps what is there');
};

SERVER_TESTS['a schema newer than this build is refused at open, in one line'] = async ({ cluster }) => {
  const connectionString = await cluster.connectionStringFor('newer');
  const first = await PostgresEventStore.open({ connectionString });
  await first.close();
  await cluster.sql("INSERT INTO schema_version (version, description) VALUES (99, 'from the future')", [], 'newer');
  const error = await rejects(PostgresEventStore.open({ connectionString }));
  assert.is(error.message, `the database's schema is at version 99, newer than this build knows (${SCHEMA_VERSION}): run a build at least as new`);
};

SERVER_TESTS['an append over the bound is a RecordTooLargeError and writes nothing'] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(store);
  const stream = `large-${randomUUID()}`;
  const half = 'x'.repeat(MAX_APPEND_BYTES / 2);
  const error = await rejects(
    store.append(stream, [
      { type: 'Large', data: half },
      { type: 'Large', data: half },
    ]),
    RecordTooLargeError,
  );
  assert.match(error.message, `at most ${MAX_APPEND_BYTES}`);
  assert.equal(await store.readStream(stream), []);
  await store.append(stream, [{ type: 'Large', data: half }]);
  assert.is((await store.readStream(stream)).length, 1, 'under the bound it is written');
};

/** Subscribes from the head and keeps what arrives. */
async function follow(store: EventStore) {
  const seen: RecordedEvent[] = [];
  const errors: Error[] = [];
  const subscription = store.subscribeToAll({ after: await store.headPosition(), onEvent: (event) => seen.push(event), onError: (e) => errors.push(e) });
  return { seen, errors, subscription };
}

/** A poll interval no test lasts: what such a store delivers live came by notification. */
const NEVER_POLLS_MS = 3_600_000;

SERVER_TESTS["another node's append reaches a subscriber through LISTEN/NOTIFY, without the poll"] = async ({ cluster, open }) => {
  const here = await PostgresEventStore.open({ connectionString: cluster.connectionString, pollIntervalMs: NEVER_POLLS_MS });
  const there = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(here, there);
  const sub = await follow(here);
  await there.append(`warm-${randomUUID()}`, [{ type: 'Warm', data: {} }]);
  await eventually(() => sub.seen.length === 1, 'the first event to arrive');
  const stream = `notified-${randomUUID()}`;
  await there.append(stream, [{ type: 'Notified', data: {} }]);
  await eventually(() => sub.seen.length === 2, 'the append to be delivered');
  assert.is(sub.seen[1]!.streamName, stream);
  assert.equal(sub.errors, []);
  await sub.subscription.unsubscribe();
};

SERVER_TESTS['a row no notification told of (written by hand) is delivered by the poll'] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString, pollIntervalMs: 200 });
  open.push(store);
  const sub = await follow(store);
  // A delivered append shows the subscription live, past its first read: the row comes after it.
  await store.append(`live-${randomUUID()}`, [{ type: 'Live', data: {} }]);
  await eventually(() => sub.seen.length === 1, 'the subscription to deliver an append');
  await cluster.sql("INSERT INTO events VALUES (nextval('events_seq'), $1, 0, 'ByHand', '{}', NULL, now())", [`by-hand-${randomUUID()}`]);
  await eventually(() => sub.seen.length === 2, 'the row to be delivered');
  assert.is(sub.seen[1]!.type, 'ByHand');
  await sub.subscription.unsubscribe();
};

SERVER_TESTS["deleteStreams keeps the newest event's stream (and names it) so the head never moves back; a later call removes it"] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(store);
  const [older, newest] = [`retired-${randomUUID()}`, `retired-${randomUUID()}`];
  await store.append(older, [{ type: 'Ended', data: {} }]);
  const { position } = await store.append(newest, [{ type: 'Ended', data: {} }]);
  assert.equal(await store.deleteStreams([older, newest]), { kept: [newest] });
  assert.equal(await store.readStream(older), []);
  assert.is((await store.readStream(newest)).length, 1);
  assert.is(await store.headPosition(), position);
  const later = await store.append(`after-${randomUUID()}`, [{ type: 'Later', data: {} }]);
  assert.equal(await store.deleteStreams([newest]), { kept: [] });
  assert.equal(await store.readStream(newest), []);
  assert.is(await store.headPosition(), later.position);
};

SERVER_TESTS['a failure names the server without its password, in one line'] = async ({ cluster }) => {
  const url = `postgresql://postgres:s3cret@127.0.0.1:${cluster.port}/no_such_database?sslmode=disable`;
  const error = await rejects(PostgresEventStore.open({ connectionString: url }));
  assert.is(error.message, 'database "no_such_database" does not exist');
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString.replace('postgres@', 'postgres:s3cret@') });
  await cluster.stop();
  try {
    const failed = await rejects(store.append('down-1', [{ type: 'Lost', data: {} }]));
    assert.match(failed.message, new RegExp(`^PostgreSQL at postgresql://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${cluster.port}/bridge\\?sslmode=disable: .*ECONNREFUSED`));
    assert.not.match(failed.message, /s3cret|\n/);
  } finally {
    await cluster.start();
    await store.close();
  }
};

SERVER_TESTS['a subscription resumes with nothing lost or repeated after its connections are ended, and after a server restart'] = async ({ cluster, open }) => {
  const adapter = await PostgresEventStore.open({ connectionString: cluster.connectionString, pollIntervalMs: 200 });
  const follower = resumingStore(adapter, { firstDelayMs: 20, maxDelayMs: 200 });
  const writer = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(follower, writer);
  const base = await writer.headPosition();
  const stream = `follow-${randomUUID()}`;
  const seen: RecordedEvent[] = [];
  const errors: Error[] = [];
  const subscription = follower.subscribeToAll({ after: base, onEvent: (e) => seen.push(e), onError: (e) => errors.push(e) });
  let writing = true;
  let written = 0;
  let failedAppends = 0;
  // Each append expects the stream where the last acknowledged one left it: one whose answer was
  // lost to a failure but that was committed shows up as a conflict, and the count is re-read.
  const writes = (async () => {
    while (writing) {
      try {
        await writer.append(stream, [{ type: 'Written', data: { i: written } }], { expectedRevision: written === 0 ? 'no_stream' : written - 1 });
        written += 1;
      } catch (error) {
        failedAppends += 1;
        if (error instanceof ConcurrencyError) written = (await writer.readStream(stream).catch(() => [])).length;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  try {
    const mine = () => seen.filter((e) => e.streamName === stream).length;
    await eventually(() => mine() >= 20, { what: () => `20 events before the faults (${mine()} seen)`, timeoutMs: 15_000 });
    const ended = await cluster.terminateConnections();
    assert.ok(ended >= 3, `the follower's listener and pooled connections and the writer's were ended (${ended})`);
    const afterTermination = mine();
    await eventually(() => mine() >= afterTermination + 20, { what: () => `delivery to go on after the connections were ended (${mine()} seen)`, timeoutMs: 15_000 });
    await cluster.restart();
    const afterRestart = mine();
    await eventually(() => mine() >= afterRestart + 20, { what: () => `delivery to go on after the restart (${mine()} seen)`, timeoutMs: 15_000 });
  } finally {
    writing = false;
    await writes;
  }
  // Delivered in order, the marker comes after everything written: a missing or doubled event shows by then.
  const marker = await writer.append(`marker-${randomUUID()}`, [{ type: 'Marked', data: {} }]);
  await eventually(() => seen.some((e) => e.position === marker.position), {
    what: () => `the marker at ${marker.position} (delivered up to ${seen.at(-1)?.position})`,
    timeoutMs: 15_000,
  });
  await subscription.unsubscribe();
  const log = await writer.readAll({ after: base, limit: 100_000 });
  assert.equal(ids(seen), ids(log), 'every event once, in the log order');
  const values = seen.filter((e) => e.streamName === stream).map((e) => (e.data as { i: number }).i);
  assert.equal(
    values,
    Array.from({ length: log.length - 1 }, (_, i) => i),
  );
  for (const [i, e] of seen.entries()) if (i > 0) assert.ok(e.position > seen[i - 1]!.position, 'positions rise');
  const interruptions = errors.filter((e) => e instanceof SubscriptionInterruptedError);
  assert.ok(interruptions.length >= 2, `both faults were reported (${interruptions.length} interruptions)`);
  assert.ok(failedAppends >= 1, 'the writer saw the faults too');
};

SERVER_TESTS['TLS: sslmode=verify-full with sslrootcert connects encrypted; without the CA it is refused in one line'] = async ({ open }) => {
  const certificates = makeCertificates();
  const tls = await startCluster({
    settings: { ssl: 'on', ssl_cert_file: 'server.crt', ssl_key_file: 'server.key' },
    files: { 'server.crt': certificates.serverCert, 'server.key': certificates.serverKey },
  });
  try {
    const caFile = join(tls.dir, 'ca.crt');
    execFileSync('cp', [certificates.caFile, caFile]);
    const base = `postgresql://postgres@127.0.0.1:${tls.port}/bridge`;
    const store = await PostgresEventStore.open({ connectionString: `${base}?sslmode=verify-full&sslrootcert=${caFile}&application_name=tls-test` });
    open.push(store);
    await store.append('tls-1', [{ type: 'Encrypted', data: {} }]);
    const [row] = await tls.sql<{ encrypted: number }>(
      "SELECT count(*)::int AS encrypted FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE ssl AND application_name = 'tls-test'",
    );
    assert.ok(row!.encrypted >= 1, 'the store’s connections are encrypted');
    const refused = await rejects(PostgresEventStore.open({ connectionString: `${base}?sslmode=verify-full` }));
    assert.match(refused.message, /certificate/);
    assert.not.match(refused.message, /\n/);
    await store.close();
  } finally {
    await tls.destroy();
    certificates.remove();
  }
};

/**
 * Holds a lock in a transaction of its own connection, as a node holding it across round trips
 * would; `release` rolls back.
 */
async function holdLock(connectionString: string, key: [number, string]): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', key);
  return {
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** A database with one schema per deployment: each store's connection string names its own. */
async function inSchema(cluster: PostgresCluster, database: string, schema: string): Promise<string> {
  const base = await cluster.connectionStringFor(database);
  await cluster.sql(`CREATE SCHEMA IF NOT EXISTS ${schema}`, [], database);
  return `${base}&options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

SERVER_TESTS['appends queue in the process, not on the pool: while they wait for the append lock, reads, polls and heartbeats answer'] = async ({ cluster, open }) => {
  const connectionString = await cluster.connectionStringFor('queued');
  const store = await PostgresEventStore.open({ connectionString: `${connectionString}&pool_size=1` });
  open.push(store);
  const held = await holdLock(connectionString, [APPEND_LOCK, 'public']);
  let appended = 0;
  const appends = Array.from({ length: 5 }, (_, i) => store.append(`queued-${i}`, [{ type: 'Queued', data: { i } }]).then(() => appended++));
  try {
    // One pooled connection, five appends waiting for the lock: the read still gets it.
    assert.equal(await store.readStream('queued-0'), []);
    assert.is(await store.headPosition(), 0);
    const beat = await store.beat({ node: 'n', instance: 'i', started: 'measuring', clockMs: Date.now(), count: 1 });
    assert.is(beat.beats.length, 1);
    assert.is(appended, 0, 'the appends are still waiting for the lock');
  } finally {
    await held.release();
  }
  await Promise.all(appends);
  assert.is((await store.readAll({ after: 0, limit: 10 })).length, 5);
};

SERVER_TESTS['two deployments in separate schemas of one database never wait for each other'] = async ({ cluster, open }) => {
  const a = await inSchema(cluster, 'schemas', 'deployment_a');
  const b = await inSchema(cluster, 'schemas', 'deployment_b');
  const [storeA, storeB] = await Promise.all([PostgresEventStore.open({ connectionString: a }), PostgresEventStore.open({ connectionString: b })]);
  open.push(storeA, storeB);
  const held = await holdLock(a, [APPEND_LOCK, 'deployment_a']);
  try {
    // A's append lock is taken, as by one of A's nodes mid-append: B appends all the same.
    const { position } = await storeB.append('b-1', [{ type: 'InB', data: {} }]);
    assert.is(position, 1);
    assert.equal(await storeA.readStream('b-1'), [], "B's event is not in A's log");
  } finally {
    await held.release();
  }
  assert.is((await storeA.append('a-1', [{ type: 'InA', data: {} }])).position, 1, 'each schema has its own positions');
};

SERVER_TESTS["a starting node waits for another's migration past the statement timeout"] = async ({ cluster, open }) => {
  const connectionString = await inSchema(cluster, 'migrating', 'slow');
  const held = await holdLock(connectionString, [MIGRATION_LOCK, 'slow']);
  const opening = PostgresEventStore.open({ connectionString });
  // Longer than the pool's statement timeout (5 s): a migration must not be cut by it.
  await new Promise((resolve) => setTimeout(resolve, 6000));
  await held.release();
  const store = await opening;
  open.push(store);
  assert.is((await store.append('migrated-1', [{ type: 'Migrated', data: {} }])).position, 1);
};

SERVER_TESTS['appends sent together: one whose revision does not match is refused alone, the others go in'] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(store);
  const stream = `batch-${randomUUID()}`;
  await store.append(stream, [{ type: 'First', data: {} }]);
  // Issued in one turn of the event loop: they go in one batch.
  const results = await Promise.allSettled([
    store.append(`${stream}-a`, [{ type: 'A', data: {} }]),
    store.append(stream, [{ type: 'Stale', data: {} }], { expectedRevision: 5 }),
    store.append(stream, [{ type: 'Second', data: {} }], { expectedRevision: 0 }),
    store.append(`${stream}-b`, [{ type: 'B', data: {} }], { expectedRevision: 'no_stream' }),
  ]);
  assert.equal(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.ok((results[1] as PromiseRejectedResult).reason instanceof ConcurrencyError);
  assert.equal(
    (await store.readStream(stream)).map((e) => e.type),
    ['First', 'Second'],
  );
};

SERVER_TESTS['a large gathering of appends goes in parts side by side, a small one in one transaction, one stream in order'] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(store);
  const prefix = `gather-${randomUUID()}`;
  /** `count` appends issued in one turn of the event loop, the k-th to stream `streamOf(k)`; answers the rows of each transaction, in log order. */
  const gather = async (name: string, count: number, streamOf: (k: number) => number) => {
    await Promise.all(Array.from({ length: count }, (_, k) => store.append(`${prefix}-${name}-${streamOf(k)}`, [{ type: 'Gathered', data: { k } }])));
    const transactions = await cluster.sql<{ rows: number }>('SELECT count(*)::int AS rows FROM events WHERE stream LIKE $1 GROUP BY tx ORDER BY min(position)', [
      `${prefix}-${name}-%`,
    ]);
    return transactions.map((t) => t.rows);
  };
  await store.append(`${prefix}-first`, [{ type: 'First', data: {} }]);

  const large = BATCHES_IN_FLIGHT * MIN_SPLIT_APPENDS;
  assert.equal(await gather('large', large, (k) => k), Array(BATCHES_IN_FLIGHT).fill(MIN_SPLIT_APPENDS), 'a transaction per connection, the appends shared evenly');

  // Too few to split; the last two name one stream, so the last waits for the others' commit.
  const small = 2 * MIN_SPLIT_APPENDS - 1;
  assert.equal(await gather('small', small, (k) => Math.min(k, small - 2)), [small - 1, 1]);
  assert.equal(
    (await store.readStream(`${prefix}-small-${small - 2}`)).map((e) => (e.data as { k: number }).k),
    [small - 2, small - 1],
  );
};

const APPEND_BATCH = 'SELECT * FROM append_batch($1::text[], $2::int[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[], $8::json[], $9::json[])';

/**
 * A transaction of its own connection, left open after `statement`: as an append whose commit is
 * slow, or another client's write that stays open. `end` commits (or rolls back).
 */
async function openTransaction(connectionString: string, statement: string, values: unknown[] = []): Promise<{ end(commit?: boolean): Promise<void> }> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query('BEGIN');
  await client.query(statement, values);
  return {
    async end(commit = true) {
      await client.query(commit ? 'COMMIT' : 'ROLLBACK');
      await client.end();
    },
  };
}

/** append_batch's arguments for one append of `count` events to `stream` at any revision. */
const oneAppend = (stream: string, count = 1) => [
  [stream],
  [-2],
  [null],
  [null],
  [count],
  [0],
  Array.from({ length: count }, () => 'ByHand'),
  Array.from({ length: count }, () => '{}'),
  Array.from({ length: count }, () => null),
];

/** Some statement waits for a lock of this type (an append waiting on another's commit). */
const someoneWaits = (cluster: PostgresCluster, locktype: 'advisory' | 'transactionid', what: string) =>
  eventually(async () => (await cluster.sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_locks WHERE locktype = $1 AND NOT granted', [locktype]))[0]!.n > 0, what);

/** Settles once the promise does, or says it has not yet (an append waiting on the server). */
const settled = (promise: Promise<unknown>) => {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return () => done;
};

SERVER_TESTS['two nodes append to one stream at once, expecting the same revision: one goes in, the other is a 409; nothing else is lost'] = async ({ cluster, open }) => {
  const [a, b] = await Promise.all([
    PostgresEventStore.open({ connectionString: cluster.connectionString }),
    PostgresEventStore.open({ connectionString: cluster.connectionString }),
  ]);
  open.push(a, b);
  const stream = `contended-${randomUUID()}`;
  const rounds = 30;
  for (let round = 0; round < rounds; round++) {
    const expectedRevision = round === 0 ? ('no_stream' as const) : round - 1;
    // Each node's append goes in a batch with an append of its own to another stream.
    const results = await Promise.allSettled([
      a.append(stream, [{ type: 'Won', data: { round, by: 'a' } }], { expectedRevision }),
      a.append(`${stream}-a`, [{ type: 'Aside', data: { round } }]),
      b.append(stream, [{ type: 'Won', data: { round, by: 'b' } }], { expectedRevision }),
      b.append(`${stream}-b`, [{ type: 'Aside', data: { round } }]),
    ]);
    const contested = [results[0]!, results[2]!];
    assert.is(contested.filter((r) => r.status === 'fulfilled').length, 1, `round ${round}: one of the two went in`);
    const refused = contested.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.ok(refused.reason instanceof ConcurrencyError, `round ${round}: the other is a conflict (${refused.reason})`);
    assert.is((refused.reason as ConcurrencyError).actual, round, `round ${round}: naming the revision the winner left`);
    assert.is(results[1]!.status, 'fulfilled');
    assert.is(results[3]!.status, 'fulfilled');
  }
  const events = await a.readStream(stream);
  assert.equal(
    events.map((e) => e.revision),
    Array.from({ length: rounds }, (_, i) => i),
  );
  assert.is((await a.readStream(`${stream}-a`)).length + (await b.readStream(`${stream}-b`)).length, 2 * rounds);
  const log = await a.readAll({ after: 0, limit: 100_000 });
  assert.is(log.filter((e) => e.streamName.startsWith(stream)).length, 3 * rounds, 'each event once in the log');
};

SERVER_TESTS['an append waits for another append to its stream that is still committing, then is judged on it (409)'] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(store);
  const stream = `committing-${randomUUID()}`;
  await store.append(stream, [{ type: 'First', data: {} }]);
  const other = await openTransaction(cluster.connectionString, APPEND_BATCH, oneAppend(stream));
  const appending = store.append(stream, [{ type: 'Second', data: {} }], { expectedRevision: 0 });
  const done = settled(appending);
  try {
    await someoneWaits(cluster, 'advisory', 'the append to wait for a lock');
    assert.not.ok(done(), 'the append waits for the other to commit');
  } finally {
    await other.end();
  }
  const error = await rejects(appending, ConcurrencyError);
  assert.equal([error.streamName, error.expected, error.actual], [stream, 0, 1]);
  assert.equal(
    (await store.readStream(stream)).map((e) => e.type),
    ['First', 'ByHand'],
  );
};

SERVER_TESTS['a fenced append waits for a takeover of its claim that is still committing, and fails whole (409)'] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(store);
  const claim = `claim-${randomUUID()}`;
  const write = `fenced-${randomUUID()}`;
  await store.append(claim, [{ type: 'Claimed', data: {} }], { expectedRevision: 'no_stream' });
  // The takeover's revision is drawn and inserted, its commit not yet done: the claim only
  // checked (no events of the fenced append's own) has no row for the unique index to fence.
  const takeover = await openTransaction(cluster.connectionString, APPEND_BATCH, oneAppend(claim));
  const fenced = store.append(write, [{ type: 'Fenced', data: {} }], { alongside: { streamName: claim, expectedRevision: 0, events: [] } });
  const done = settled(fenced);
  try {
    await someoneWaits(cluster, 'advisory', 'the fenced append to wait for a lock');
    assert.not.ok(done(), 'the fenced append waits for the takeover to commit');
  } finally {
    await takeover.end();
  }
  const error = await rejects(fenced, ConcurrencyError);
  assert.equal([error.streamName, error.expected, error.actual], [claim, 0, 1]);
  assert.equal(await store.readStream(write), [], 'nothing of the fenced append was written');
};

SERVER_TESTS['a row written outside append_batch at the same revision: a 409, alone or in a batch whose rest goes in once'] = async ({ cluster, open }) => {
  const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(store);
  /** The row at revision 1 of `stream`, inserted by hand and committed once `appends` wait on it. */
  const outsideRow = async (stream: string, appends: () => Array<Promise<unknown>>) => {
    const outside = await openTransaction(
      cluster.connectionString,
      "INSERT INTO events (position, stream, revision, type, data, created) VALUES (nextval('events_seq'), $1, 1, 'ByHand', '{}', now())",
      [stream],
    );
    // Settled from the start: an append may be refused before the outside transaction's end is answered.
    const sent = Promise.allSettled(appends());
    try {
      // The append's insert waits on the unique index for the outside row's transaction.
      await someoneWaits(cluster, 'transactionid', 'the append to wait on the unique index');
    } finally {
      await outside.end();
    }
    return sent;
  };
  const conflict = (result: PromiseSettledResult<unknown>) => {
    assert.is(result.status, 'rejected');
    const error = (result as PromiseRejectedResult).reason as ConcurrencyError;
    assert.ok(error instanceof ConcurrencyError, `a conflict, not the store's failure (${error})`);
    assert.equal([error.expected, error.actual], [0, 1]);
  };

  const alone = `outside-${randomUUID()}`;
  await store.append(alone, [{ type: 'First', data: {} }]);
  const [single] = await outsideRow(alone, () => [store.append(alone, [{ type: 'Second', data: {} }], { expectedRevision: 0 })]);
  conflict(single!);
  assert.equal(
    (await store.readStream(alone)).map((e) => e.type),
    ['First', 'ByHand'],
  );

  const stream = `outside-${randomUUID()}`;
  await store.append(stream, [{ type: 'First', data: {} }]);
  const results = await outsideRow(stream, () => [
    store.append(`${stream}-before`, [{ type: 'Before', data: {} }]),
    store.append(stream, [{ type: 'Second', data: {} }], { expectedRevision: 0 }),
    store.append(`${stream}-after`, [{ type: 'After', data: {} }], { expectedRevision: 'no_stream' }),
  ]);
  assert.equal(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  conflict(results[1]!);
  assert.is((await store.readStream(`${stream}-before`)).length, 1);
  assert.is((await store.readStream(`${stream}-after`)).length, 1);
  assert.equal(
    (await store.readStream(stream)).map((e) => e.type),
    ['First', 'ByHand'],
  );
};

SERVER_TESTS["a node busy appending still delivers every other node's append, without the poll, once and in order"] = async ({ cluster, open }) => {
  const here = await PostgresEventStore.open({ connectionString: cluster.connectionString, pollIntervalMs: NEVER_POLLS_MS });
  const there = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(here, there);
  const sub = await follow(here);
  const theirs: number[] = [];
  let stop = false;
  // Here appends from several callers without a pause, so that a batch of its own is in flight
  // whenever the other node's notifications come, and goes on a while after the other node's
  // last append: its notification too comes while here is appending.
  const busy = Promise.all(
    Array.from({ length: 8 }, async (_, k) => {
      for (let i = 0; !stop; i++) await here.append(`busy-${k}`, [{ type: 'Mine', data: { i } }]);
    }),
  );
  for (let i = 0; i < 40; i++) theirs.push((await there.append(`theirs-${randomUUID()}`, [{ type: 'Theirs', data: { i } }])).position);
  await new Promise((resolve) => setTimeout(resolve, 300));
  stop = true;
  await busy;
  await eventually(() => sub.seen.filter((e) => e.type === 'Theirs').length === theirs.length, {
    what: () => `the other node's events delivered (${sub.seen.filter((e) => e.type === 'Theirs').length} of ${theirs.length})`,
    timeoutMs: 5000,
  });
  const positions = sub.seen.map((e) => e.position);
  assert.equal(
    positions,
    [...positions].sort((a, b) => a - b),
    'in log order',
  );
  assert.is(new Set(positions).size, positions.length, 'each once');
  assert.equal(
    sub.seen.filter((e) => e.type === 'Theirs').map((e) => e.position),
    theirs,
  );
  assert.equal(sub.errors, []);
  await sub.subscription.unsubscribe();
};

SERVER_TESTS['a transaction that wrote and stays open (another database of the cluster) holds followers back, not appends; they catch up once it ends'] = async ({
  cluster,
  open,
}) => {
  const follower = await PostgresEventStore.open({ connectionString: cluster.connectionString, pollIntervalMs: NEVER_POLLS_MS });
  const writer = await PostgresEventStore.open({ connectionString: cluster.connectionString });
  open.push(follower, writer);
  const sub = await follow(follower);
  const before = await follower.headPosition();
  const elsewhere = await cluster.connectionStringFor('elsewhere');
  await cluster.sql('CREATE TABLE IF NOT EXISTS scratch (x int)', [], 'elsewhere');
  const blocker = await openTransaction(elsewhere, 'INSERT INTO scratch VALUES (1)');
  const written: number[] = [];
  const streams = Array.from({ length: 20 }, () => `held-${randomUUID()}`);
  try {
    for (const [i, stream] of streams.entries()) {
      const started = Date.now();
      written.push((await writer.append(stream, [{ type: 'Held', data: { i } }])).position);
      assert.ok(Date.now() - started < 2000, 'an append is not held back');
    }
    await eventually(() => follower.heldBackMs() >= 500, 'the follower to have been held back half a second');
    assert.is(sub.seen.length, 0, 'no event delivered while an older transaction runs');
    assert.is(await follower.headPosition(), before, 'the head readers can reach has not moved');
    assert.is((await follower.readAll({ after: before, limit: 100 })).length, 0);
    assert.is((await follower.readStream(streams[0]!)).length, 1, 'a stream reads its committed events (deciders are not held back)');
  } finally {
    await blocker.end();
  }
  // No notification tells of the blocker's end, and this follower never polls: its reads again
  // while held back deliver.
  await eventually(() => sub.seen.length === written.length, { what: () => `every event delivered (${sub.seen.length} of ${written.length})`, timeoutMs: 5000 });
  assert.equal(
    sub.seen.map((e) => e.position),
    written,
    'every event once, in order',
  );
  assert.is(await follower.headPosition(), written.at(-1));
  assert.is(follower.heldBackMs(), 0);
  assert.equal(sub.errors, []);
  await sub.subscription.unsubscribe();
};

/** A CA and a server certificate for 127.0.0.1 signed by it (openssl, EC keys: quick to make). */
function makeCertificates() {
  const dir = execFileSync('mktemp', ['-d'], { encoding: 'utf8' }).trim();
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=community-bridge test CA');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  execFileSync('sh', ['-c', 'printf "subjectAltName=IP:127.0.0.1,DNS:localhost" > san.ext'], { cwd: dir });
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '1', '-extfile', 'san.ext');
  return {
    caFile: join(dir, 'ca.crt'),
    serverCert: readFileSync(join(dir, 'server.crt'), 'utf8'),
    serverKey: readFileSync(join(dir, 'server.key'), 'utf8'),
    remove: () => execFileSync('rm', ['-rf', dir]),
  };
}

const binaries = postgresBinaries();
if ('missing' in binaries) {
  console.log(`skipped: PostgreSQL suites — ${binaries.missing}`);
  skippedEventStoreContract(CONTRACT).run();
  for (const title of Object.keys(SERVER_TESTS)) server.skip(title);
  server.run();
} else {
  const cluster = await startCluster();
  // One database for the whole contract: its tests never assume an empty store.
  eventStoreContract(CONTRACT, async () => {
    const store = await PostgresEventStore.open({ connectionString: cluster.connectionString });
    return { store, cleanup: () => store.close() };
  }).run();
  server.before.each((ctx) => {
    ctx.cluster = cluster;
    ctx.open = [];
  });
  server.after.each(async (ctx) => {
    for (const store of ctx.open) await store.close().catch(() => undefined);
  });
  server.after(() => cluster.destroy());
  for (const [title, run] of Object.entries(SERVER_TESTS)) server(title, run);
  server.run();
}
