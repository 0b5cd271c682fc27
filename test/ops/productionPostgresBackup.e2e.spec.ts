// docs/production.md, "Backup and restore", PostgreSQL: pg_dump of the database while a node
// writes to it, pg_restore into a fresh database, and a node started on the copy reads the same
// events in the same order (a prefix of the source's log), answers from them, and appends after
// them. A throwaway cluster of Debian's PostgreSQL (test/support/postgres.ts); without its binaries
// the suite says it was skipped.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../src/store/port.js';
import { PostgresEventStore } from '../../src/store/postgres.js';
import { ALICE, BOB, startHarness } from '../support/harness.js';
import { postgresBinaries, startCluster, type PostgresCluster } from '../support/postgres.js';

const NODE_ID = 'bridge-1';

/** Runs a PostgreSQL client program to its end; rejects with its output when it fails. */
function client(binDir: string, program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(binDir, program), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${program} ${args.join(' ')} exited ${code}: ${output}`))));
  });
}

async function wholeLog(connectionString: string): Promise<RecordedEvent[]> {
  const store = await PostgresEventStore.open({ connectionString });
  try {
    return await store.readAll({ after: 0, limit: 1_000_000 });
  } finally {
    await store.close();
  }
}

const test = suite<{ cluster: PostgresCluster; binDir: string }>('PostgreSQL backup and restore, as docs/production.md says');

const TESTS: Record<string, (ctx: { cluster: PostgresCluster; binDir: string }) => Promise<void>> = {
  'pg_dump taken while a node appends, pg_restore into a new database: a node there reads the same log, answers from it and appends after it': async ({ cluster, binDir }) => {
    const source = await cluster.connectionStringFor('source');
    const dir = mkdtempSync(join(tmpdir(), 'community-bridge-pgdump-'));
    const dump = join(dir, 'bridge.dump');
    const h = await startHarness({ env: { EVENTSTORE_CONNECTION_STRING: source, NODE_ID } });
    let key: string;
    let before: number;
    try {
      ({ key } = await h.key());
      assert.is((await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, key)).status, 200);
      assert.is((await h.post('/adm/points/edit', { oId: ALICE.oId, point: 3, memo: 'before the dump' }, key)).status, 200);
      before = (await h.events()).length;

      // Writes go on during the dump: it is one snapshot, so it holds a prefix of the log.
      let writing = true;
      let written = 0;
      const writer = (async () => {
        for (let year = 2031; writing; year++) {
          const res = await h.post('/adm/vip/submit', { oId: BOB.oId, quality: 'svip', expired: `${year}-01-01 00:00:00` }, key);
          assert.is(res.status, 200, res.text);
          written++;
        }
      })();
      while (written === 0) await new Promise((resolve) => setImmediate(resolve));
      await client(binDir, 'pg_dump', ['--format=custom', `--file=${dump}`, source.replace(/\?.*$/, '')]);
      writing = false;
      await writer;
    } finally {
      await h.close();
    }
    const sourceLog = await wholeLog(source);

    const restored = await cluster.connectionStringFor('restored');
    await client(binDir, 'pg_restore', ['--exit-on-error', '--no-owner', `--dbname=${restored.replace(/\?.*$/, '')}`, dump]);
    const restoredLog = await wholeLog(restored);
    assert.ok(restoredLog.length >= before, 'everything committed before the dump began is in it');
    assert.equal(restoredLog, sourceLog.slice(0, restoredLog.length), 'the same events, in the same order, with their positions');

    // A node on the copy, under the same NODE_ID: it answers from the restored log and appends after it.
    const node = await startHarness({ env: { EVENTSTORE_CONNECTION_STRING: restored, NODE_ID } });
    try {
      const vip = await node.get(`/adm/vip/${ALICE.oId}`, key);
      assert.is(vip.status, 200, vip.text);
      assert.equal(
        vip.body.data.map((record: { quality: string; expired: string }) => [record.quality, record.expired]),
        [['vip', '2030-01-01 00:00:00.000Z']],
      );
      const audit = await node.get(`/adm/audit/points/${ALICE.oId}`, key);
      assert.is(audit.status, 200, audit.text);
      assert.match(audit.text, 'before the dump');
      assert.is((await node.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'svip', expired: '2032-01-01 00:00:00' }, key)).status, 200);
      const [newest] = (await node.events('vip-')).slice(-1);
      assert.ok(newest!.position > restoredLog.at(-1)!.position, 'new positions continue after the restored ones');
    } finally {
      await node.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

const binaries = postgresBinaries();
if ('missing' in binaries) {
  console.log(`skipped: PostgreSQL backup and restore — ${binaries.missing}`);
  for (const title of Object.keys(TESTS)) test.skip(title);
} else {
  const cluster = await startCluster();
  test.before.each((ctx) => {
    ctx.cluster = cluster;
    ctx.binDir = binaries.dir;
  });
  test.after(() => cluster.destroy());
  for (const [title, run] of Object.entries(TESTS)) test(title, run);
}
test.run();
