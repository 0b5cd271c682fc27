// The shared contract against a real EventStoreDB, enabled by EVENTSTORE_CONNECTION_STRING
// (e.g. esdb://localhost:2113?tls=false). Without it the tests are counted as skipped, and the
// reason is printed on the one line the test runner shows for skipped files.
import { EventStoreDbEventStore } from '../../src/store/eventstoredb.js';
import { eventStoreContract, skippedEventStoreContract } from './contract.js';

const name = 'EventStoreDbEventStore contract';
const connectionString = process.env.EVENTSTORE_CONNECTION_STRING;

if (connectionString) {
  // Each test gets its own client; the contract's stream names are random, so tests never see
  // each other's streams (or those of earlier runs) on the shared server.
  eventStoreContract(name, async () => {
    const store = new EventStoreDbEventStore(connectionString);
    return { store, cleanup: () => store.close() };
  }).run();
} else {
  console.log('skipped: EventStoreDB contract suite — EVENTSTORE_CONNECTION_STRING is not set (no EventStoreDB server on this machine)');
  skippedEventStoreContract(name).run();
}
