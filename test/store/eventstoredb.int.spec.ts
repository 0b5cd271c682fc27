// The shared contract against a real EventStoreDB, enabled by EVENTSTORE_CONNECTION_STRING
// (e.g. esdb://localhost:2113?tls=false). Without it the tests are counted as skipped, and the
// reason is printed on the one line the test runner shows for skipped files.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStoreDbEventStore } from '../../src/store/eventstoredb.js';
import { eventStoreContract, skippedEventStoreContract } from './contract.js';

const name = 'EventStoreDbEventStore contract';
const connectionString = process.env.EVENTSTORE_CONNECTION_STRING;
const schemes = suite('EventStoreDB connection string schemes');
const KURRENTDB = 'the server answers through the kurrentdb:// form of the connection string';

if (connectionString) {
  // Each test gets its own client; the contract's stream names are random, so tests never see
  // each other's streams (or those of earlier runs) on the shared server.
  eventStoreContract(name, async () => {
    const store = new EventStoreDbEventStore(connectionString);
    return { store, cleanup: () => store.close() };
  }).run();
  schemes(KURRENTDB, async () => {
    const store = new EventStoreDbEventStore(connectionString.replace(/^esdb/, 'kurrentdb'));
    try {
      const { position } = await store.append(`scheme-${Date.now()}`, [{ type: 'Checked', data: {} }]);
      assert.ok((await store.headPosition()) >= position);
    } finally {
      await store.close();
    }
  });
  schemes.run();
} else {
  console.log('skipped: EventStoreDB contract suite — EVENTSTORE_CONNECTION_STRING is not set (no EventStoreDB server on this machine)');
  skippedEventStoreContract(name).run();
  schemes.skip(KURRENTDB);
  schemes.run();
}
