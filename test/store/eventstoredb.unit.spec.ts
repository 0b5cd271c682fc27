// The EventStoreDB adapter's own logic, without a server (none can run here): retries with the
// same event ids, the oversized-append mapping, the subscription's end and error reports, fenced
// writes refused, heartbeats, and the connection string schemes. The client is replaced by an in-memory stand-in that fails on command
// the way the real one does (it throws the client's own error classes).
import { EventEmitter } from 'node:events';
import {
  AccessDeniedError,
  EventStoreDBClient,
  MaxAppendSizeExceededError,
  StreamNotFoundError,
  UnavailableError,
  type AppendExpectedRevision,
  type EventData,
} from '@eventstore/db-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ConcurrencyError, RecordTooLargeError } from '../../src/domain/errors.js';
import { statusOf } from '../../src/http/middleware/errors.js';
import { forEventStoreDbClient, redactedConnectionString } from '../../src/store/connectionString.js';
import { EventStoreDbEventStore, MultiStreamAppendUnsupportedError, type EventStoreDbClientApi } from '../../src/store/eventstoredb.js';
import { OutOfOrderEventError, SubscriptionEndedError, SubscriptionInterruptedError, type RecordedEvent } from '../../src/store/port.js';
import { resumingStore } from '../../src/store/resuming.js';

interface Stored {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: unknown;
  metadata: unknown;
  created: Date;
  position: { commit: bigint; prepare: bigint };
}

/** What the next appendToStream call does wrong: fail before writing, or write and lose the answer. */
type AppendFault = { before: Error } | { after: Error };

class FakeClient {
  readonly log: Stored[] = [];
  readonly appendFaults: AppendFault[] = [];
  readonly readFaults: Error[] = [];
  /** Event ids of every appendToStream call. */
  readonly appendCalls: string[][] = [];
  readonly subscriptions: Array<EventEmitter & { fromPosition: unknown; unsubscribe(): Promise<void> }> = [];
  readonly metadata = new Map<string, unknown>();

  stream(streamId: string) {
    return this.log.filter((e) => e.streamId === streamId);
  }

  async appendToStream(streamId: string, events: EventData[], options: { expectedRevision: AppendExpectedRevision }) {
    this.appendCalls.push(events.map((e) => e.id));
    const fault = this.appendFaults.shift();
    if (fault && 'before' in fault) throw fault.before;
    const existing = this.stream(streamId);
    const expected = options.expectedRevision;
    const current = existing.length - 1;
    if (typeof expected === 'bigint' || expected === 'no_stream') {
      const at = expected === 'no_stream' ? 0 : Number(expected) + 1;
      // The server's idempotent append: the same ids at that revision are a success, not a write.
      if (existing[at]?.id === events[0]!.id) return { success: true, nextExpectedRevision: BigInt(at + events.length - 1), position: undefined };
      if ((expected === 'no_stream' && current !== -1) || (typeof expected === 'bigint' && Number(expected) !== current)) {
        const { WrongExpectedVersionError } = await import('@eventstore/db-client');
        throw new WrongExpectedVersionError(undefined, { streamName: streamId, expected, current: current < 0 ? 'no_stream' : BigInt(current) });
      }
    }
    // 'any' is not deduplicated here: the worst case, a server that lost its cache of recent ids.
    for (const [k, e] of events.entries()) {
      const position = BigInt((this.log.length + 1) * 100);
      this.log.push({ streamId, id: e.id, revision: BigInt(current + 1 + k), type: e.type, data: e.data, metadata: e.metadata, created: new Date(), position: { commit: position, prepare: position } });
    }
    if (fault && 'after' in fault) throw fault.after;
    const last = this.log.at(-1)!;
    return { success: true, nextExpectedRevision: last.revision, position: last.position };
  }

  readStream(streamId: string, options: { direction?: string; maxCount?: number } = {}) {
    const fault = this.readFaults.shift();
    const events = this.stream(streamId);
    const ordered = options.direction === 'backwards' ? [...events].reverse() : events;
    return (async function* () {
      if (fault) throw fault;
      if (events.length === 0) throw new StreamNotFoundError(undefined, streamId);
      for (const event of ordered.slice(0, options.maxCount ?? Infinity)) yield { event: { ...event, isJson: true } };
    })();
  }

  readAll(options: { fromPosition?: unknown; maxCount?: number; direction?: string } = {}) {
    const fault = this.readFaults.shift();
    const from = typeof options.fromPosition === 'object' ? (options.fromPosition as { commit: bigint }).commit : 0n;
    const events = options.direction === 'backwards' ? [...this.log].reverse() : this.log.filter((e) => e.position.commit >= from);
    return (async function* () {
      if (fault) throw fault;
      for (const event of events.slice(0, options.maxCount ?? Infinity)) yield { event: { ...event, isJson: true } };
    })();
  }

  subscribeToAll(options: { fromPosition: unknown }) {
    const subscription = Object.assign(new EventEmitter(), { fromPosition: options.fromPosition, unsubscribe: async () => undefined });
    this.subscriptions.push(subscription);
    return subscription;
  }

  async setStreamMetadata(streamId: string, metadata: unknown) {
    this.metadata.set(streamId, metadata);
    return { success: true, nextExpectedRevision: 0n, position: undefined };
  }

  /** Hands an event of the log to a subscription, as the server pushes one. */
  push(subscription: EventEmitter, event: Stored) {
    subscription.emit('data', { event: { ...event, isJson: true } });
  }

  async dispose() {}
}

const FAST = { windowMs: 2000, firstDelayMs: 1, maxDelayMs: 5 };

function adapter(client: FakeClient, retry = FAST) {
  return new EventStoreDbEventStore(client as unknown as EventStoreDbClientApi, retry);
}

const unavailable = () => new UnavailableError(undefined, '14 UNAVAILABLE: No connection established');

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return assert.unreachable('expected a rejection');
}

test("an 'any' append whose answer was lost is retried with the same ids and written once", async () => {
  const client = new FakeClient();
  client.appendFaults.push({ after: unavailable() });
  const result = await adapter(client).append('client-1', [{ type: 'A', data: { n: 1 } }, { type: 'B', data: { n: 2 } }]);
  assert.is(client.stream('client-1').length, 2, 'the events are in the stream once');
  assert.is(client.appendCalls.length, 1, 'the retry found them and did not send them again');
  assert.equal(result, { nextExpectedRevision: 1, position: Number(client.log.at(-1)!.position.commit) });
});

test('an append with an expected revision whose answer was lost is retried with the same ids; the server answers it as a duplicate', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('vip-1', [{ type: 'A', data: {} }]);
  client.appendFaults.push({ after: unavailable() });
  const result = await store.append('vip-1', [{ type: 'B', data: {} }], { expectedRevision: 0 });
  assert.equal(
    client.stream('vip-1').map((e) => e.type),
    ['A', 'B'],
  );
  assert.is(client.appendCalls.length, 3);
  assert.equal(client.appendCalls[1], client.appendCalls[2], 'the retry carries the same event ids');
  assert.equal(result, { nextExpectedRevision: 1, position: Number(client.log.at(-1)!.position.commit) }, 'the position is read back when the answer has none');
});

test('an append refused as unavailable before it was written is retried and written once', async () => {
  const client = new FakeClient();
  client.appendFaults.push({ before: unavailable() }, { before: unavailable() });
  await adapter(client).append('message-1', [{ type: 'Pushed', data: {} }], { expectedRevision: 'no_stream' });
  assert.is(client.appendCalls.length, 3);
  assert.is(client.stream('message-1').length, 1);
});

test('transient failures past the retry window reject with the last failure', async () => {
  const client = new FakeClient();
  for (let i = 0; i < 1000; i++) client.appendFaults.push({ before: unavailable() });
  const error = await rejection(adapter(client, { windowMs: 30, firstDelayMs: 5, maxDelayMs: 10 }).append('s-1', [{ type: 'A', data: {} }]));
  assert.instance(error, UnavailableError);
  assert.ok(client.appendCalls.length >= 2, `${client.appendCalls.length} attempts`);
  assert.ok(client.appendCalls.length < 1000);
  assert.is(client.log.length, 0);
});

test('a failure that is not transient is not retried', async () => {
  const client = new FakeClient();
  client.appendFaults.push({ before: new AccessDeniedError(undefined, 'Access denied') });
  assert.instance(await rejection(adapter(client).append('s-1', [{ type: 'A', data: {} }])), AccessDeniedError);
  assert.is(client.appendCalls.length, 1);
});

test("an append over the server's maximum append size is a RecordTooLargeError (413)", async () => {
  const client = new FakeClient();
  client.appendFaults.push({ before: MaxAppendSizeExceededError.fromMaxAppendSize(1_048_576) });
  const error = await rejection(adapter(client).append('s-1', [{ type: 'Big', data: { blob: 'x' } }]));
  assert.instance(error, RecordTooLargeError);
  assert.match((error as Error).message, /1048576 bytes/);
  assert.is(statusOf(error as RecordTooLargeError), 413);
  assert.is(client.appendCalls.length, 1);
});

test('a wrong expected revision is a ConcurrencyError naming the actual revision', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('s-1', [{ type: 'A', data: {} }]);
  const error = await rejection(store.append('s-1', [{ type: 'B', data: {} }], { expectedRevision: 'no_stream' }));
  assert.instance(error, ConcurrencyError);
  assert.is((error as ConcurrencyError).actual, 0);
});

test('reads retry transient failures', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('s-1', [{ type: 'A', data: {} }]);
  client.readFaults.push(unavailable(), unavailable());
  assert.equal(
    (await store.readStream('s-1')).map((e) => e.type),
    ['A'],
  );
  client.readFaults.push(unavailable());
  assert.equal(
    (await store.readAll({ after: 0, limit: 10 })).map((e) => e.type),
    ['A'],
  );
  client.readFaults.push(unavailable());
  assert.is(await store.headPosition(), 100);
});

test('a read of $all that goes backwards is asserted, never skipped', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('s-1', [{ type: 'A', data: {} }, { type: 'B', data: {} }]);
  assert.equal((await store.readAll({ after: 100, limit: 10 })).map((e) => e.type), ['B'], 'the inclusive start is no event of the page');
  [client.log[0], client.log[1]] = [client.log[1]!, client.log[0]!];
  try {
    await store.readAll({ after: 0, limit: 10 });
    assert.unreachable('read out of order');
  } catch (error) {
    assert.instance(error, OutOfOrderEventError);
    assert.match((error as Error).message, /position 100 after position 200/);
  }
});

test("the subscription reports the end of the server's stream and an error, once each; resumingStore resumes after the last delivered event", async () => {
  const client = new FakeClient();
  const store = adapter(client);
  for (let i = 0; i < 4; i++) await store.append('s-1', [{ type: 'E', data: { i } }]);
  const delivered: RecordedEvent[] = [];
  const errors: Error[] = [];
  const subscription = resumingStore(store, { firstDelayMs: 1, maxDelayMs: 1 }).subscribeToAll({
    after: 100,
    onEvent: (e) => delivered.push(e),
    onError: (e) => errors.push(e),
  });
  const [first] = client.subscriptions;
  assert.equal(first!.fromPosition, { commit: 100n, prepare: 100n });
  client.push(first!, client.log[0]!); // the event at the start position itself: already had
  client.push(first!, client.log[1]!);
  first!.emit('end');
  first!.emit('close');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.is(errors.length, 1, 'one report for end and close');
  assert.instance((errors[0] as SubscriptionInterruptedError).cause, SubscriptionEndedError);

  const second = client.subscriptions[1]!;
  assert.equal(second.fromPosition, { commit: 200n, prepare: 200n }, 'resumed after the last delivered event');
  client.push(second, client.log[2]!);
  second.emit('error', unavailable());
  second.emit('close');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.is(errors.length, 2);
  assert.instance((errors[1] as SubscriptionInterruptedError).cause, UnavailableError);

  const third = client.subscriptions[2]!;
  assert.equal(third.fromPosition, { commit: 300n, prepare: 300n });
  client.push(third, client.log[3]!);
  assert.equal(
    delivered.map((e) => e.position),
    [200, 300, 400],
  );
  await subscription.unsubscribe();
  third.emit('close');
  assert.is(errors.length, 2, 'nothing is reported after unsubscribe');
});

test('an append with alongside (a fenced write) is refused whole, with or without events: no multi-stream transaction', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('claim-1', [{ type: 'Claimed', data: {} }]);
  for (const events of [[{ type: 'Progressed', data: {} }], []]) {
    const error = await rejection(store.append('work-1', [{ type: 'Done', data: {} }], { alongside: { streamName: 'claim-1', expectedRevision: 0, events } }));
    assert.instance(error, MultiStreamAppendUnsupportedError);
    assert.match((error as Error).message, /work-1 and check claim-1 in one atomic write: fenced writes need a store with atomic multi-stream appends \(SQLite, PostgreSQL\)/);
  }
  assert.is(client.appendCalls.length, 1, 'nothing was sent');
  assert.equal(
    client.log.map((e) => e.streamId),
    ['claim-1'],
  );
});

test("beats go to one bounded stream; each instance reads every instance's newest beat, the server's time as the store's clock; forgotten instances drop out; the log never shows them", async () => {
  const client = new FakeClient();
  const [one, two] = [adapter(client), adapter(client)];
  await one.append('user-1', [{ type: 'Registered', data: {} }]);
  const a = { node: 'node-a', instance: 'a-1', started: '2024-01-01T00:00:00.000Z', clockMs: 1, count: 1 };
  const b = { node: 'node-b', instance: 'b-1', started: '2024-01-01T00:00:01.000Z', clockMs: 2, count: 1 };
  await one.beat(a);
  const reading = await two.beat(b);
  assert.equal(reading.beats, [a, b]);
  assert.is(reading.storeClockMs, client.log.at(-1)!.created.getTime(), "the server's created stamp of this beat");
  assert.equal((await one.beat({ ...a, count: 2 })).beats, [{ ...a, count: 2 }, b], 'the newest beat of an instance counts');
  assert.equal((await two.beat({ ...b, count: 2 }, ['a-1'])).beats, [{ ...b, count: 2 }]);
  assert.equal((await one.beat({ ...b, instance: 'b-2' })).beats, [{ ...b, count: 2 }, { ...b, instance: 'b-2' }]);
  assert.equal(client.metadata.get('nodebeats'), { maxCount: 256 }, 'the stream is bounded');

  assert.equal(
    (await one.readAll({ after: 0, limit: 100 })).map((e) => e.streamName),
    ['user-1'],
    'readAll hides the beats',
  );
  assert.is(await one.headPosition(), 100, 'so does the head');
  const delivered: string[] = [];
  one.subscribeToAll({ after: 0, onEvent: (e) => delivered.push(e.streamName) });
  for (const event of client.log) client.push(client.subscriptions[0]!, event);
  assert.equal(delivered, ['user-1'], 'and the subscription');
});

test('kurrentdb:// and kurrentdb+discover:// are translated to schemes client 6.x parses', () => {
  assert.is(forEventStoreDbClient('kurrentdb://localhost:2113?tls=false'), 'esdb://localhost:2113?tls=false');
  assert.is(forEventStoreDbClient('kurrentdb+discover://admin:changeit@node1:2113,node2:2113'), 'esdb+discover://admin:changeit@node1:2113,node2:2113');
  assert.is(forEventStoreDbClient('esdb://localhost:2113'), 'esdb://localhost:2113');
  assert.throws(() => EventStoreDBClient.connectionString('kurrentdb://localhost:2113?tls=false'), /esdb/, 'client 6.x alone refuses the scheme');
  for (const connectionString of ['kurrentdb://localhost:2113?tls=false', 'kurrentdb+discover://admin:changeit@node1:2113,node2:2113?tls=false']) {
    const client = EventStoreDBClient.connectionString(forEventStoreDbClient(connectionString));
    void client.dispose();
  }
});

test('EVENTSTORE_CONNECTION_STRING is checked at config time, with a message naming the variable', () => {
  for (const ok of ['esdb://localhost:2113?tls=false', 'esdb+discover://a:b@h1:2113,h2:2113', 'kurrentdb://localhost:2113', 'kurrentdb+discover://cluster.example:2113?tls=true']) {
    assert.is(loadConfig({ EVENTSTORE_CONNECTION_STRING: ok }).eventStoreConnectionString, ok);
  }
  const refused = (value: string): string => {
    try {
      loadConfig({ EVENTSTORE_CONNECTION_STRING: value });
    } catch (error) {
      assert.instance(error, ConfigError);
      return (error as Error).message;
    }
    assert.unreachable(`${value} was accepted`);
    return '';
  };
  assert.match(refused('postgres://localhost'), /EVENTSTORE_CONNECTION_STRING: must start with esdb:\/\/, esdb\+discover:\/\/, kurrentdb:\/\/ or kurrentdb\+discover:\/\//);
  assert.match(refused('kurrentdb://'), /EVENTSTORE_CONNECTION_STRING: names no host after kurrentdb:\/\//);
  assert.match(refused('esdb://user:pass@?tls=false'), /names no host/);
});

test('a connection string in a message never shows its password', () => {
  assert.is(redactedConnectionString('esdb://admin:changeit@localhost:2113?tls=false'), 'esdb://admin:***@localhost:2113?tls=false');
  assert.is(redactedConnectionString('esdb://localhost:2113'), 'esdb://localhost:2113');
});

test.run();
