// Read-model snapshots of a node on PostgreSQL: it keeps its snapshot in its own DATA_DIR and
// starts from it, however old it is: what retention deleted since (on any node) is recorded in
// the log, and the read models forget it. On a throwaway cluster (test/support/postgres.ts).
import { writeFile } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotFile } from '../../src/core.js';
import { readSnapshotFile, writeSnapshotFile } from '../../src/projections/snapshotFile.js';
import { capturedLog } from '../support/capturedLog.js';
import { startHarness } from '../support/harness.js';
import { testsOnCluster, type ClusterTests, type PostgresCluster } from '../support/postgres.js';
import { assertSameAsFullReplay, snapshotLine, traffic, TRAFFIC_USERS, visitorDeletedAfterSnapshot } from '../support/snapshots.js';

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
  'a node on PostgreSQL starts from the snapshot in its DATA_DIR, with the read models a replay of the log builds, also when streams were deleted after it was taken': async ({
    cluster,
  }) => {
    const captured = capturedLog('info');
    const connectionString = await cluster.connectionStringFor('snapshots');
    const h = await startHarness({ log: captured.log, users: TRAFFIC_USERS, env: { EVENTSTORE_CONNECTION_STRING: connectionString, NODE_ID: 'pg-node-1' } });
    // From here on, anonymous streams are deleted as soon as they end (what ended so far, at this start).
    const deletedAtOnce = { ANONYMOUS_RETENTION_MS: '0' };
    try {
      await traffic(h);
      await h.restart();
      const line = snapshotLine(captured);
      assert.match(String(line.msg), /^read models restored from a snapshot at position \d+$/);
      assert.ok((await readSnapshotFile(snapshotFile(h.dataDir)))!.header.models.length > 0, 'the snapshot is in DATA_DIR');
      await assertSameAsFullReplay(h, withoutSweepTimes);

      // A visitor connected while a snapshot is taken leaves after it, and retention deletes its
      // stream; the next start is from that snapshot, taken two hours ago by its header.
      await h.restart(deletedAtOnce);
      const { snapshot, clientId } = await visitorDeletedAfterSnapshot(h);
      await writeFile(snapshotFile(h.dataDir), snapshot);
      const content = (await readSnapshotFile(snapshotFile(h.dataDir)))!;
      content.header.taken = new Date(Date.now() - 2 * 3_600_000).toISOString();
      await writeSnapshotFile(snapshotFile(h.dataDir), content.header, content.states);
      await h.restart(deletedAtOnce);
      assert.match(String(snapshotLine(captured).msg), /^read models restored from a snapshot at position \d+$/);
      assert.is(h.service.deps.readModels.clients.get(clientId), undefined, 'the visitor is not connected forever');
      await assertSameAsFullReplay(h, withoutSweepTimes);
    } finally {
      await h.close();
    }
  },
};

const test = suite<{ cluster: PostgresCluster }>('read-model snapshots on PostgreSQL');
await testsOnCluster(test, 'read-model snapshots on PostgreSQL', TESTS);
test.run();
