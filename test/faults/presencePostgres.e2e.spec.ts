// Presence across two nodes on one PostgreSQL, a throwaway cluster (test/faults/presenceKill.ts
// says what is checked): a SIGKILLed node's clients leave presence on the other once its lease
// lapses, its heartbeats being rows of the database rather than of a shared file.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import { createSimulator } from '../../src/community/simulator.js';
import { PostgresEventStore } from '../../src/store/postgres.js';
import { defaultUsers } from '../support/harness.js';
import { testsOnCluster, type ClusterTests, type PostgresCluster } from '../support/postgres.js';
import { issueKey, killServiceProcesses, startServiceProcess } from '../support/serviceProcess.js';
import { killedNodeLeavesPresence, PRESENCE_ENV } from './presenceKill.js';

const TESTS: ClusterTests = {
  'both nodes list the same users and times; the killed node takes its clients out of presence on the other': async ({ cluster }) => {
    const connectionString = await cluster.connectionStringFor('presence');
    const simulator = createSimulator({ users: defaultUsers() });
    const running = await simulator.listen();
    const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-presence-pg-'));
    const store = await PostgresEventStore.open({ connectionString });
    const streams: Array<{ close(): void }> = [];
    // The CLI issues the key into the nodes' database.
    const before = process.env.EVENTSTORE_CONNECTION_STRING;
    process.env.EVENTSTORE_CONNECTION_STRING = connectionString;
    try {
      const { key } = await issueKey(dataDir);
      const env = { ...PRESENCE_ENV, EVENTSTORE_CONNECTION_STRING: connectionString };
      await killedNodeLeavesPresence({
        key,
        start: (nodeId) => startServiceProcess({ dataDir, communityUrl: running.url, nodeId, env }),
        events: (stream) => store.readStream(stream),
        streams,
      });
    } finally {
      if (before === undefined) delete process.env.EVENTSTORE_CONNECTION_STRING;
      else process.env.EVENTSTORE_CONNECTION_STRING = before;
      for (const stream of streams) stream.close();
      await killServiceProcesses();
      await store.close();
      await running.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};

const test = suite<{ cluster: PostgresCluster }>('presence across nodes on PostgreSQL: a killed node leaves it once its lease lapses');
await testsOnCluster(test, 'presence across nodes on PostgreSQL', TESTS);
test.run();
