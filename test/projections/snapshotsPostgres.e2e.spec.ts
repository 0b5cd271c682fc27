// Read-model snapshots of a node on PostgreSQL: it keeps its snapshot in its own DATA_DIR and
// starts from it; one older than retention allows is not used (other nodes may have deleted
// streams meanwhile). On a throwaway cluster (test/support/postgres.ts).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotFile } from '../../src/core.js';
import { readSnapshotFile, writeSnapshotFile } from '../../src/projections/snapshotFile.js';
import { capturedLog } from '../support/capturedLog.js';
import { startHarness } from '../support/harness.js';
import { testsOnCluster, type ClusterTests, type PostgresCluster } from '../support/postgres.js';
import { assertSameAsFullReplay, snapshotLine, traffic, TRAFFIC_USERS } from '../support/snapshots.js';

/**
 * The node's clock follows the database's here, so time moves between the two starts compared:
 * what the read models note of the time they last swept is left out (the entries kept are not).
 */
function withoutSweepTimes(states: Record<string, unknown>): Record<string, unknown> {
  const { horizon: _h, ...operations } = states.operations as Record<string, unknown>;
  const { passedHorizon: _p, ...recentMessages } = states['recent-messages'] as Record<string, unknown>;
  return { ...states, operations, 'recent-messages': recentMessages };
}

const TESTS: ClusterTests = {
  'a node on PostgreSQL starts from the snapshot in its DATA_DIR, with the read models a replay of the log builds; one older than retention allows is not used': async ({
    cluster,
  }) => {
    const captured = capturedLog('info');
    const connectionString = await cluster.connectionStringFor('snapshots');
    const h = await startHarness({ log: captured.log, users: TRAFFIC_USERS, env: { EVENTSTORE_CONNECTION_STRING: connectionString, NODE_ID: 'pg-node-1' } });
    try {
      await traffic(h);
      await h.restart();
      const line = snapshotLine(captured);
      assert.match(String(line.msg), /^read models restored from a snapshot at position \d+$/);
      assert.ok((await readSnapshotFile(snapshotFile(h.dataDir)))!.header.models.length > 0, 'the snapshot is in DATA_DIR');
      await assertSameAsFullReplay(h, withoutSweepTimes);

      // Back to a start from a snapshot, then one taken two hours ago: another node may have deleted streams since.
      await h.restart();
      await h.service.close();
      const file = snapshotFile(h.dataDir);
      const content = (await readSnapshotFile(file))!;
      content.header.taken = new Date(Date.now() - 2 * 3_600_000).toISOString();
      await writeSnapshotFile(file, content.header, content.states);
      await h.restart();
      const old = snapshotLine(captured);
      assert.match(String(old.msg), /^read-model snapshot not used: the snapshot is \d+ s old, older than retention allows \(60 s\)/);
    } finally {
      await h.close();
    }
  },
};

const test = suite<{ cluster: PostgresCluster }>('read-model snapshots on PostgreSQL');
await testsOnCluster(test, 'read-model snapshots on PostgreSQL', TESTS);
test.run();
