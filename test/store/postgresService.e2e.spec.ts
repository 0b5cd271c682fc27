// The service and the operator CLI on PostgreSQL, as an operator runs them: EVENTSTORE_CONNECTION_STRING
// set to a postgresql:// string on a throwaway cluster (test/support/postgres.ts). The service
// starts, takes and answers writes, and rides out the database going away and coming back
// without a restart; the CLI migrates, checks, and points backups at pg_dump.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, startHarness } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { testsOnCluster, type ClusterTests, type PostgresCluster } from '../support/postgres.js';
import { runToEnd } from '../support/serviceProcess.js';
import { SCHEMA_VERSION } from '../../src/store/postgresSchema.js';

/** The CLI on the store. */
const cli = (connectionString: string, ...args: string[]) => runToEnd(args, { EVENTSTORE_CONNECTION_STRING: connectionString });

const TESTS: ClusterTests = {
  'the service starts on PostgreSQL, answers a VIP submit and reads it back; /readyz says 503 while the database is down and 200 once it is back, without a restart': async ({
    cluster,
  }) => {
    const connectionString = await cluster.connectionStringFor('service');
    const h = await startHarness({ env: { EVENTSTORE_CONNECTION_STRING: connectionString, NODE_ID: 'pg-node-1' } });
    try {
      const { key } = await h.key();
      const submitted = await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, key);
      assert.is(submitted.status, 200, submitted.text);
      const read = await h.get(`/adm/vip/${ALICE.oId}`, key);
      assert.is(read.status, 200, read.text);
      assert.equal(
        read.body.data.map((record: { quality: string; expired: string }) => [record.quality, record.expired]),
        [['vip', '2030-01-01 00:00:00.000Z']],
      );
      const types = (await cluster.sql<{ type: string }>('SELECT DISTINCT type FROM events', [], 'service')).map((row) => row.type);
      for (const type of ['ApiKeyIssued', 'VipGranted']) assert.ok(types.includes(type), `${type} is in PostgreSQL's log (${types.join(', ')})`);
      const beats = await cluster.sql<{ node: string }>('SELECT node FROM nodes', [], 'service');
      assert.equal(
        beats.map((row) => row.node),
        ['pg-node-1'],
        'the node beats in the nodes table',
      );
      assert.is((await h.get('/readyz')).status, 200);
      const operator = await h.key(['audit:read'], 'ops', { allApps: true });

      await cluster.stop();
      const down = await h.get('/readyz', operator.key);
      assert.is(down.status, 503, down.text);
      assert.match(down.body.detail, /ECONNREFUSED|connect|terminat/i);

      await cluster.start();
      // A resume backs off up to 5 s.
      await eventually(async () => (await h.get('/readyz')).status === 200, { what: '/readyz to answer 200 once the database is back', timeoutMs: 20_000, everyMs: 100 });
      const again = await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'svip', expired: '2031-01-01 00:00:00' }, key);
      assert.is(again.status, 200, again.text);
      assert.is((await h.get(`/adm/vip/${ALICE.oId}`, key)).body.data.length, 2, 'the write is read back by the same node');
    } finally {
      await h.close();
    }
  },

  'cli store migrate makes the schema, then finds it current; store check says ok; store backup points at pg_dump (exit 2); the password is never printed': async ({ cluster }) => {
    const plain = await cluster.connectionStringFor('cli');
    const connectionString = plain.replace('postgres@', 'postgres:s3cret@');
    const shown = connectionString.replace(':s3cret@', ':***@');

    const migrated = await cli(connectionString, 'store', 'migrate');
    assert.is(migrated.code, 0, migrated.stderr);
    assert.is(migrated.stdout, `PostgreSQL at ${shown}: migrated the schema from version 0 to ${SCHEMA_VERSION}\n`);
    assert.is(migrated.stderr, `Store: PostgreSQL at ${shown}\n`);
    const again = await cli(connectionString, 'store', 'migrate');
    assert.is(again.stdout, `PostgreSQL at ${shown}: the schema is at version ${SCHEMA_VERSION} already\n`);

    const checked = await cli(connectionString, 'store', 'check');
    assert.is(checked.code, 0, checked.stderr);
    assert.is(checked.stdout, 'ok\n');

    const backup = await cli(connectionString, 'store', 'backup', '/tmp/never-written.dump');
    assert.is(backup.code, 2);
    assert.equal(backup.stderr.split('\n').filter(Boolean), [
      `Store: PostgreSQL at ${shown}`,
      `store backup copies the embedded SQLite store; back up PostgreSQL at ${shown} with pg_dump (e.g. pg_dump --format=custom --file=<file> <database>)`,
    ]);

    // A sequence set back below the head would hand positions out twice: the check says so.
    await cluster.sql("INSERT INTO events VALUES (5, 'checked-1', 0, 'Checked', '{}', NULL, now())", [], 'cli');
    const damaged = await cli(connectionString, 'store', 'check');
    assert.is(damaged.code, 1);
    assert.is(damaged.stdout, `PostgreSQL at ${shown}: the position sequence (events_seq) is at 0, below the head 5: positions would be handed out twice\n`);
    // A row after it appended by an older transaction (written by hand): a follower could have read past it.
    await cluster.sql("INSERT INTO events (position, stream, revision, type, data, created, tx) VALUES (6, 'checked-2', 0, 'Checked', '{}', now(), '3')", [], 'cli');
    const disordered = await cli(connectionString, 'store', 'check');
    assert.is(disordered.code, 1);
    assert.match(disordered.stdout, `PostgreSQL at ${shown}: position 6 was appended by an older transaction than the position before it`);
    for (const run of [migrated, again, checked, backup, damaged, disordered]) assert.not.match(run.stdout + run.stderr, /s3cret/);
  },

  'a transaction left open elsewhere in the cluster: writes are recorded, /readyz stays 200 and warns, the metric shows it; all clears once it ends': async ({ cluster }) => {
    const connectionString = await cluster.connectionStringFor('heldback');
    const h = await startHarness({ env: { EVENTSTORE_CONNECTION_STRING: connectionString, NODE_ID: 'pg-held-1' } });
    const elsewhere = await cluster.connectionStringFor('heldback_other');
    await cluster.sql('CREATE TABLE scratch (x int)', [], 'heldback_other');
    const blocker = new pg.Client({ connectionString: elsewhere });
    try {
      const { key } = await h.key(['*'], 'ops', { allApps: true });
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query('INSERT INTO scratch VALUES (1)');
      // Its first write is recorded at once; then it waits for the node to read it back.
      const submitting = h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, key);
      const warned = await eventually(
        async () => {
          // The warnings are an operator's to read (an all-apps key); anyone else learns ready or not.
          const ready = await h.get('/readyz', key);
          return ready.status === 200 && (ready.body.warnings as string[] | undefined)?.find((w) => /waited \d+ s to become readable/.test(w));
        },
        { what: '/readyz to warn of the open transaction', timeoutMs: 15_000, everyMs: 200 },
      );
      assert.match(warned, /transaction in the PostgreSQL cluster that wrote is still open/);
      const held = Number(/^store_followers_held_back_seconds (\S+)$/m.exec((await h.get('/metrics')).text)?.[1]);
      assert.ok(held >= 5, `the metric shows it (${held} s)`);
      const types = (await cluster.sql<{ type: string }>('SELECT type FROM events', [], 'heldback')).map((row) => row.type);
      assert.ok(types.includes('UserRegistered'), `the write is in the log meanwhile (${types.join(', ')})`);
      // The submit registered the user, then waited for its read model to show it: held back
      // past the runner's 5 s, it gives up as store trouble: 503, to retry with the same key.
      const gaveUp = await submitting;
      assert.is(gaveUp.status, 503, gaveUp.text);
      assert.is(gaveUp.headers.get('retry-after'), '1');
      await blocker.query('COMMIT');
      await eventually(async () => (await h.get('/readyz', key)).body.warnings === undefined, { what: 'the warning to clear', everyMs: 100 });
      assert.match((await h.get('/metrics')).text, /^store_followers_held_back_seconds 0$/m);
      const submitted = await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, key);
      assert.is(submitted.status, 200, submitted.text);
      assert.is((await h.get(`/adm/vip/${ALICE.oId}`, key)).body.data.length, 1, 'the write is read back');
    } finally {
      await blocker.end().catch(() => undefined);
      await h.close();
    }
  },

  'a node refuses to start on a database it cannot reach, in one line naming the server without its password': async () => {
    const unreachable = `postgresql://postgres:s3cret@127.0.0.1:${await freePort()}/bridge?sslmode=disable`;
    const result = await cli(unreachable, 'events');
    assert.is(result.code, 1);
    const lines = result.stderr.split('\n').filter(Boolean);
    assert.is(lines.length, 2, result.stderr);
    assert.match(
      lines[1]!,
      /^Cannot open the event store \(PostgreSQL at postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/bridge\?sslmode=disable\): connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
    );
  },
};

const test = suite<{ cluster: PostgresCluster }>('the service and the CLI on PostgreSQL');
await testsOnCluster(test, 'the service and the CLI on PostgreSQL', TESTS);
test.run();
