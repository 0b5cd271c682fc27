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
