// The EventStoreDB adapter's own logic, without a server (none can run here), against a stand-in
// for client 6.x whose streams behave like the real client's (test/store/eventstoredbFake.ts):
// every read's call ends, bounded reads, backpressure on the subscription, retries with the same
// event ids, conflicts and the oversized-append mapping, soft deletes not repeated, fenced writes
// refused (and what a request with an Idempotency-Key gets for it), heartbeats, and the
// connection string's schemes and refused parameters.
import { AccessDeniedError, EventStoreDBClient, MaxAppendSizeExceededError, UnavailableError, jsonEvent } from '@eventstore/db-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openStore, StoreOpenError } from '../../src/core.js';
import { ConcurrencyError, RecordTooLargeError } from '../../src/domain/errors.js';
import { statusOf } from '../../src/http/middleware/errors.js';
import { forEventStoreDbClient, redactedConnectionString } from '../../src/store/connectionString.js';
import { EventStoreDbEventStore, MultiStreamAppendUnsupportedError, READ_PAGE, type EventStoreDbClientApi } from '../../src/store/eventstoredb.js';
import { HEAD_PAGE_MAX } from '../../src/store/eventstoredbHead.js';
import { SUBSCRIPTION_BUFFER } from '../../src/store/eventstoredbSubscription.js';
import { OutOfOrderEventError, SubscriptionEndedError, type SubscriptionInterruptedError, type EventStore, type RecordedEvent } from '../../src/store/port.js';
import { resumingStore } from '../../src/store/resuming.js';
import { eventually } from '../support/eventually.js';
import { ALICE, startHarness } from '../support/harness.js';
import { rejects } from '../support/rejects.js';
import { FakeClient, type Call, type FakeSubscription } from './eventstoredbFake.js';

const FAST = { windowMs: 2000, firstDelayMs: 1, maxDelayMs: 5 };

function adapter(client: FakeClient, retry = FAST) {
  return new EventStoreDbEventStore(client as unknown as EventStoreDbClientApi, retry);
}

const unavailable = () => new UnavailableError(undefined, '14 UNAVAILABLE: No connection established');

/**
 * Waits until the subscriber has taken everything the server sent on this call. The adapter hands
 * each event over as it takes it, so by then whatever it was to deliver is delivered.
 */
const drained = (subscription: FakeSubscription) =>
  eventually(() => subscription.held === 0 && subscription.readableLength === 0, {
    what: () => `the subscriber to take every event (${subscription.held} on the server, ${subscription.readableLength} in the stream)`,
  });

/** The streaming calls made since `from`, none of them left open on the server. */
function callsSince(client: FakeClient, from: number): Call[] {
  const calls = client.calls.slice(from);
  assert.equal(
    calls.filter((c) => c.open).map((c) => c.method),
    [],
    'every call has ended',
  );
  return calls;
}

/** `count` events written straight to the server, one append each. */
async function write(client: FakeClient, streamId: string, count: number, type = 'E') {
  for (let i = 0; i < count; i++) await client.appendToStream(streamId, [jsonEvent({ type, data: { i } })], { expectedRevision: 'any' });
}

/** `count` heartbeats of another node (the log hides them). */
const beats = (client: FakeClient, count: number) => write(client, 'nodebeats', count, 'NodeBeat');

test('headPosition: the newest domain event past the heartbeats after it, in bounded backward pages; every call ends', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  const { position } = await store.append('user-1', [{ type: 'Registered', data: {} }]);
  await beats(client, 300);
  const from = client.calls.length;
  assert.is(await store.headPosition(), position);
  const pages = callsSince(client, from);
  assert.equal(
    pages.map((c) => [c.options.direction, Number(c.options.maxCount)]),
    [1, 2, 4, 8, 16, 32, 64, 128, 256].map((n) => ['backwards', n]),
    'pages of 1, then twice as many, up to HEAD_PAGE_MAX',
  );
  assert.is(HEAD_PAGE_MAX, 256);

  // What was looked at is known: the next call reads back only to it.
  await beats(client, 1);
  const next = client.calls.length;
  assert.is(await store.headPosition(), position);
  assert.equal(
    callsSince(client, next).map((c) => Number(c.options.maxCount)),
    [1, 2],
  );
  const again = client.calls.length;
  assert.is(await store.headPosition(), position);
  assert.equal(
    callsSince(client, again).map((c) => Number(c.options.maxCount)),
    [1],
    'nothing new: one event read',
  );

  const { position: newer } = await store.append('user-2', [{ type: 'Registered', data: {} }]);
  assert.is(await store.headPosition(), newer);
});

test('headPosition after reading the log to its end (the catch-up) or following it reads one event; an empty log is 0', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  assert.is(await store.headPosition(), 0);
  const { position } = await store.append('user-1', [{ type: 'Registered', data: {} }]);
  await beats(client, 50);
  assert.equal((await store.readAll({ after: 0, limit: 1000 })).length, 1);
  let from = client.calls.length;
  assert.is(await store.headPosition(), position);
  assert.equal(
    callsSince(client, from).map((c) => Number(c.options.maxCount)),
    [1],
  );

  const seen: number[] = [];
  const subscription = store.subscribeToAll({ after: position, onEvent: (e) => seen.push(e.position) });
  await beats(client, 50);
  const { position: newer } = await store.append('user-2', [{ type: 'Registered', data: {} }]);
  await beats(client, 50);
  await drained(client.subscriptions[0]!);
  assert.equal(seen, [newer]);
  from = client.calls.length;
  assert.is(await store.headPosition(), newer);
  assert.equal(
    callsSince(client, from)
      .filter((c) => c.method === 'readAll')
      .map((c) => Number(c.options.maxCount)),
    [1],
    'the subscription went through the beats',
  );
  await subscription.unsubscribe();
});

test('headPosition ends its calls when a read fails (retried) and when it finds $all out of order (asserted)', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  const { position } = await store.append('user-1', [{ type: 'Registered', data: {} }]);
  await beats(client, 20);
  client.readFaults.push({ error: unavailable() }, { error: unavailable(), afterItems: 0 });
  assert.is(await store.headPosition(), position);
  callsSince(client, 0);

  const fresh = adapter(client);
  // Two of the beats change places: a backward page then goes up.
  const [i, j] = [client.log.length - 3, client.log.length - 2];
  [client.log[i], client.log[j]] = [client.log[j]!, client.log[i]!];
  await rejects(fresh.headPosition(), OutOfOrderEventError);
  callsSince(client, 0);
});

test('readAll returns at most `limit` events, from the start and from a position, past hidden events, in bounded pages; every call ends', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  const positions: number[] = [];
  for (let i = 0; i < 5; i++) {
    positions.push((await store.append(`s-${i}`, [{ type: 'E', data: { i } }])).position);
    await beats(client, 2);
  }
  const at = async (after: number, limit: number) => (await store.readAll({ after, limit })).map((e) => e.position);
  assert.equal(await at(0, 3), positions.slice(0, 3), 'from the start: exactly `limit`');
  assert.equal(await at(0, 1), positions.slice(0, 1));
  assert.equal(await at(positions[2]!, 2), positions.slice(3, 5), 'from a position: after it, exactly `limit`');
  assert.equal(await at(positions[1]!, 1), [positions[2]!]);
  assert.equal(await at(0, 5), positions);
  assert.equal(await at(0, 100), positions, 'fewer than `limit` at the end of $all');
  assert.equal(await at(positions[4]!, 10), []);
  assert.equal(await at(0, 0), []);
  callsSince(client, 0);

  // Domain events back to back from the very start: nothing hidden to make up for an extra one.
  const contiguous = new FakeClient();
  const plain = adapter(contiguous);
  await plain.append('s', [
    { type: 'A', data: {} },
    { type: 'B', data: {} },
    { type: 'C', data: {} },
  ]);
  assert.equal(
    (await plain.readAll({ after: 0, limit: 2 })).map((e) => e.type),
    ['A', 'B'],
  );
  assert.equal(
    (await plain.readAll({ after: 100, limit: 1 })).map((e) => e.type),
    ['B'],
  );
  callsSince(contiguous, 0);

  await write(client, 'bulk', 1100);
  const from = client.calls.length;
  const page = await store.readAll({ after: positions[4]!, limit: 1000 });
  assert.is(page.length, 1000);
  assert.ok(
    callsSince(client, from).every((c) => Number(c.options.maxCount) <= READ_PAGE + 1),
    'no read asks for more than a page',
  );
});

test('a read of $all that goes backwards is asserted, never skipped', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('s-1', [
    { type: 'A', data: {} },
    { type: 'B', data: {} },
  ]);
  assert.equal(
    (await store.readAll({ after: 100, limit: 10 })).map((e) => e.type),
    ['B'],
    'the inclusive start is no event of the page',
  );
  [client.log[0], client.log[1]] = [client.log[1]!, client.log[0]!];
  await rejects(store.readAll({ after: 0, limit: 10 }), /position 100 after position 200/);
  callsSince(client, 0);
});

test('the subscription is read with backpressure: the server holds back what the stream has no room for, and nothing is lost', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await write(client, 's', 1000);
  const delivered: RecordedEvent[] = [];
  const heldAtFirst: number[] = [];
  const subscription = store.subscribeToAll({
    after: 0,
    onEvent: (event) => {
      if (delivered.length === 0) heldAtFirst.push(client.subscriptions[0]!.held);
      delivered.push(event);
    },
  });
  const stream = client.subscriptions[0]!;
  assert.is(stream.readableHighWaterMark, SUBSCRIPTION_BUFFER, 'the bound is passed to the client');
  await drained(stream);
  assert.is(delivered.length, 1000);
  assert.equal(
    delivered.map((e) => e.data),
    Array.from({ length: 1000 }, (_, i) => ({ i })),
    'in order, none lost',
  );
  assert.ok(heldAtFirst[0]! >= 1000 - SUBSCRIPTION_BUFFER - 1, `the server still held ${heldAtFirst[0]} events when the first was delivered`);
  assert.ok(stream.maxBuffered <= SUBSCRIPTION_BUFFER, `at most ${SUBSCRIPTION_BUFFER} events waited in the stream (${stream.maxBuffered})`);

  // Live events go through the same way; after unsubscribe nothing does, and the call is over.
  await store.append('late', [{ type: 'L', data: {} }]);
  await drained(stream);
  assert.is(delivered.at(-1)!.streamName, 'late');
  await subscription.unsubscribe();
  await store.append('later', [{ type: 'L', data: {} }]);
  await drained(stream);
  assert.is(delivered.at(-1)!.streamName, 'late');
  assert.equal(client.openCalls(), []);
});

test('unsubscribing in the middle of a burst delivers nothing more and ends the call', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await write(client, 's', 200);
  const delivered: number[] = [];
  const subscription = store.subscribeToAll({
    after: 0,
    onEvent: (event) => {
      delivered.push((event.data as { i: number }).i);
      if (delivered.length === 10) void subscription.unsubscribe();
    },
  });
  // A destroyed stream hands over nothing more: what was delivered by then is all there will be.
  await eventually(() => client.subscriptions[0]!.destroyed, 'the unsubscribe to end the stream');
  assert.equal(
    delivered,
    Array.from({ length: 10 }, (_, i) => i),
  );
  assert.equal(client.openCalls(), []);
  assert.ok(client.subscriptions[0]!.held > 100, 'the rest never left the server');
});

test("the subscription reports the end of the server's stream and an error, once each; resumingStore resumes after the last delivered event", async () => {
  const client = new FakeClient();
  const store = adapter(client);
  for (let i = 0; i < 2; i++) await store.append('s-1', [{ type: 'E', data: { i } }]);
  const delivered: RecordedEvent[] = [];
  const errors: Error[] = [];
  const subscription = resumingStore(store, { firstDelayMs: 1, maxDelayMs: 1 }).subscribeToAll({
    after: 100,
    onEvent: (e) => delivered.push(e),
    onError: (e) => errors.push(e),
  });
  const first = client.subscriptions[0]!;
  assert.equal(first.fromPosition, { commit: 100n, prepare: 100n });
  first.deliver([client.log[0]!]); // the event at the start position itself: already had
  await drained(first);
  first.serverEnds();
  await eventually(() => client.subscriptions.length === 2, 'a resume after the end');
  assert.is(errors.length, 1, 'one report for the end');
  assert.instance((errors[0] as SubscriptionInterruptedError).cause, SubscriptionEndedError);
  assert.equal(
    delivered.map((e) => e.position),
    [200],
  );

  const second = client.subscriptions[1]!;
  assert.equal(second.fromPosition, { commit: 200n, prepare: 200n }, 'resumed after the last delivered event');
  await store.append('s-1', [{ type: 'E', data: { i: 2 } }]);
  await drained(second);
  second.serverFails(unavailable());
  await eventually(() => client.subscriptions.length === 3, 'a resume after the failure');
  assert.is(errors.length, 2);
  assert.instance((errors[1] as SubscriptionInterruptedError).cause, UnavailableError);

  const third = client.subscriptions[2]!;
  assert.equal(third.fromPosition, { commit: 300n, prepare: 300n });
  await store.append('s-1', [{ type: 'E', data: { i: 3 } }]);
  await drained(third);
  assert.equal(
    delivered.map((e) => e.position),
    [200, 300, 400],
  );
  // A witness subscribed alongside fails at the same moment: once it has reported, a report from
  // the unsubscribed one would have come too.
  const witnessErrors: Error[] = [];
  const witness = resumingStore(store, { firstDelayMs: 1, maxDelayMs: 1 }).subscribeToAll({ after: 400, onEvent: () => undefined, onError: (e) => witnessErrors.push(e) });
  const witnessCall = client.subscriptions[3]!;
  await subscription.unsubscribe();
  third.serverFails(unavailable());
  witnessCall.serverFails(unavailable());
  await eventually(() => witnessErrors.length === 1, 'the witness to report its failure');
  assert.is(errors.length, 2, 'nothing is reported after unsubscribe');
  await witness.unsubscribe();
  assert.equal(client.openCalls(), []);
});

test('an append with an expected revision whose answer was lost is retried with the same ids; the server answers it as a duplicate', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('vip-1', [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' });
  client.appendFaults.push({ after: unavailable() });
  const result = await store.append('vip-1', [{ type: 'B', data: {} }], { expectedRevision: 0 });
  assert.equal(
    client.stream('vip-1').map((e) => e.type),
    ['A', 'B'],
  );
  assert.is(client.appendCalls.length, 3);
  assert.equal(client.appendCalls[1], client.appendCalls[2], 'the retry carries the same event ids');
  assert.equal(result, { nextExpectedRevision: 1, position: Number(client.log.at(-1)!.position.commit) }, 'the position is read back when the answer has none');
  assert.equal(client.openCalls(), []);
});

test("an 'any' append is retried as it is, with the same ids, without reading the stream first (only heartbeats append with 'any'; a beat written twice reads as one)", async () => {
  const client = new FakeClient();
  const store = adapter(client);
  const a = { node: 'node-a', instance: 'a-1', started: '2024-01-01T00:00:00.000Z', clockMs: 1, count: 1 };
  await store.beat(a);
  client.appendFaults.push({ after: unavailable() });
  const from = client.calls.length;
  const reading = await store.beat({ ...a, count: 2 });
  assert.equal(reading.beats, [{ ...a, count: 2 }]);
  assert.equal(client.appendCalls.at(-1), client.appendCalls.at(-2), 'sent again with the same ids');
  assert.is(reading.storeClockMs, client.log.at(-1)!.created.getTime(), 'stamped by the later copy');
  assert.equal(
    callsSince(client, from).map((c) => c.options.maxCount),
    [256],
    'one read: the beats read back, nothing before the retry',
  );
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
  await rejects(adapter(client, { windowMs: 30, firstDelayMs: 5, maxDelayMs: 10 }).append('s-1', [{ type: 'A', data: {} }]), UnavailableError);
  assert.ok(client.appendCalls.length >= 2, `${client.appendCalls.length} attempts`);
  assert.ok(client.appendCalls.length < 1000);
  assert.is(client.log.length, 0);
});

test('a failure that is not transient is not retried', async () => {
  const client = new FakeClient();
  client.appendFaults.push({ before: new AccessDeniedError(undefined, 'Access denied') });
  await rejects(adapter(client).append('s-1', [{ type: 'A', data: {} }]), AccessDeniedError);
  assert.is(client.appendCalls.length, 1);
});

test("an append over the server's maximum append size is a RecordTooLargeError (413)", async () => {
  const client = new FakeClient();
  client.appendFaults.push({ before: MaxAppendSizeExceededError.fromMaxAppendSize(1_048_576) });
  const error = await rejects(adapter(client).append('s-1', [{ type: 'Big', data: { blob: 'x' } }]), RecordTooLargeError);
  assert.match(error.message, /1048576 bytes/);
  assert.is(statusOf(error), 413);
  assert.is(client.appendCalls.length, 1);
});

test('a wrong expected revision is a ConcurrencyError naming the actual revision, with throwOnAppendFailure=false too', async () => {
  for (const throwOnAppendFailure of [true, false]) {
    const client = new FakeClient();
    client.throwOnAppendFailure = throwOnAppendFailure;
    const store = adapter(client);
    await store.append('s-1', [{ type: 'A', data: {} }]);
    let error = await rejects(store.append('s-1', [{ type: 'B', data: {} }], { expectedRevision: 'no_stream' }), ConcurrencyError);
    assert.equal([error.expected, error.actual], ['no_stream', 0]);
    for (let i = 0; i < 4; i++) await store.append('s-1', [{ type: 'C', data: {} }]);
    error = await rejects(store.append('s-1', [{ type: 'B', data: {} }], { expectedRevision: 2 }), ConcurrencyError);
    assert.equal([error.expected, error.actual], [2, 4], `the stream's revision, not the client's (throwOnAppendFailure=${throwOnAppendFailure})`);
    error = await rejects(store.append('s-2', [{ type: 'B', data: {} }], { expectedRevision: 0 }), ConcurrencyError);
    assert.equal([error.expected, error.actual], [0, 'no_stream']);
    assert.is(client.stream('s-1').length, 5, 'nothing written');
    assert.equal(client.openCalls(), []);
  }
});

test('reads retry transient failures', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('s-1', [{ type: 'A', data: {} }]);
  client.readFaults.push({ error: unavailable() }, { error: unavailable() });
  assert.equal(
    (await store.readStream('s-1')).map((e) => e.type),
    ['A'],
  );
  client.readFaults.push({ error: unavailable() });
  assert.equal(
    (await store.readAll({ after: 0, limit: 10 })).map((e) => e.type),
    ['A'],
  );
  client.readFaults.push({ error: unavailable() });
  assert.is(await store.headPosition(), 100);
  assert.equal(await store.readStream('missing'), []);
  assert.equal(client.openCalls(), []);
});

test('deleteStreams soft-deletes once: a stream that already reads as not found (deleted before, its events still in $all) is not deleted again', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('client-1', [
    { type: 'Connected', data: {} },
    { type: 'Ended', data: {} },
  ]);
  await store.append('login-1', [{ type: 'Started', data: {} }]);
  await store.append('user-1', [{ type: 'Registered', data: {} }]);
  assert.equal(await store.deleteStreams(['client-1', 'login-1', 'never-written']), { kept: [] });
  assert.equal(client.deleteCalls, ['client-1', 'login-1']);
  assert.equal(await store.readStream('client-1'), []);
  const writes = client.log.length;
  assert.equal(
    (await store.readAll({ after: 0, limit: 100 })).map((e) => e.streamName),
    ['client-1', 'client-1', 'login-1', 'user-1'],
    'until a scavenge their events stay in $all: a restarted node finds them due again',
  );

  // The next start's retention run.
  assert.equal(await adapter(client).deleteStreams(['client-1', 'login-1']), { kept: [] });
  assert.equal(client.deleteCalls, ['client-1', 'login-1'], 'no second delete');
  assert.is(client.log.length, writes, 'no $metadata written again');
  assert.equal(client.openCalls(), []);

  // A stream written again after its delete is deleted again.
  await store.append('login-1', [{ type: 'Started', data: {} }]);
  await store.deleteStreams(['login-1']);
  assert.equal(client.deleteCalls, ['client-1', 'login-1', 'login-1']);
});

test('an append with alongside (a fenced write) is refused whole, with or without events: no multi-stream transaction; it answers 503 with one line', async () => {
  const client = new FakeClient();
  const store = adapter(client);
  await store.append('claim-1', [{ type: 'Claimed', data: {} }]);
  for (const events of [[{ type: 'Progressed', data: {} }], []]) {
    const error = await rejects(
      store.append('work-1', [{ type: 'Done', data: {} }], { alongside: { streamName: 'claim-1', expectedRevision: 0, events } }),
      MultiStreamAppendUnsupportedError,
    );
    assert.is(statusOf(error), 503);
    assert.match(error.message, /^Idempotency-Key is not supported for this request on EventStoreDB: .*atomic append to two streams.*SQLite or PostgreSQL$/);
    assert.not.match(error.message, /\n|work-1|claim-1/, 'one line, no stream names');
  }
  assert.is(client.appendCalls.length, 1, 'nothing was sent');
});

test('through the service: a fenced write (push, VIP) with an Idempotency-Key answers 503 with that line and frees the key; without the header it succeeds; a platform operation keeps its key', async () => {
  const client = new FakeClient();
  let esdb: EventStore | undefined;
  // The service on the EventStoreDB adapter over the stand-in (the SQLite store it opened is
  // closed with it, unused).
  const h = await startHarness({
    wrapStore: (sqlite) => {
      const store = adapter(client);
      esdb = store;
      return {
        ...bind(store),
        close: async () => {
          await store.close();
          await sqlite.close();
        },
      };
    },
  });
  try {
    assert.ok(esdb);
    const { key } = await h.key();
    const push = (idempotencyKey?: string) =>
      h.request('POST', '/adm/message/push', {
        body: { oIds: [ALICE.oId], name: 'n', data: { x: 1 } },
        apiKey: key,
        headers: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {},
      });
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await push('k-1');
      assert.is(refused.status, 503, `attempt ${attempt + 1}: ${refused.text}`);
      assert.match(refused.body.message, /^Idempotency-Key is not supported for this request on EventStoreDB: /);
      assert.not.match(refused.body.message, /\n/);
    }
    const ready = await h.get('/readyz');
    assert.is(ready.status, 200, `a refused request is no failure of the store: ${ready.text}`);
    const vip = await h.request('POST', '/adm/vip/submit', {
      body: { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' },
      apiKey: key,
      headers: { 'Idempotency-Key': 'k-2' },
    });
    assert.is(vip.status, 503, vip.text);
    // A platform operation binds its key with single-stream appends: it keeps its Idempotency-Key.
    const points = () => h.request('POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 1, memo: 'm' }, apiKey: key, headers: { 'Idempotency-Key': 'k-3' } });
    const sent = await points();
    assert.is(sent.status, 200, sent.text);
    const replayed = await points();
    assert.equal([replayed.status, replayed.headers.get('idempotent-replayed'), replayed.body], [200, 'true', sent.body]);
    assert.not.ok(
      client.log.some((e) => e.streamId.startsWith('message-')),
      'nothing of the refused pushes was written',
    );
    const plain = await push();
    assert.is(plain.status, 200, plain.text);
    assert.ok(
      client.log.some((e) => e.streamId.startsWith('message-')),
      'the push without the header is in the log',
    );
    assert.equal(
      client.openCalls().filter((c) => c.method !== 'subscribeToAll'),
      [],
      'no read left open',
    );
  } finally {
    await h.close();
  }
});

/** The store's methods bound to it, to be spread into a wrapper. */
function bind(store: EventStore): EventStore {
  return {
    append: (...args) => store.append(...args),
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    subscribeToAll: (...args) => store.subscribeToAll(...args),
    headPosition: () => store.headPosition(),
    deleteStreams: (...args) => store.deleteStreams(...args),
    beat: (...args) => store.beat(...args),
    close: () => store.close(),
  };
}

test("beats go to one bounded stream; each instance reads every instance's newest beat, the server's time as the store's clock; forgotten instances drop out; the log never shows them", async () => {
  const client = new FakeClient();
  const [one, two] = [adapter(client), adapter(client)];
  const { position } = await one.append('user-1', [{ type: 'Registered', data: {} }]);
  const a = { node: 'node-a', instance: 'a-1', started: '2024-01-01T00:00:00.000Z', clockMs: 1, count: 1 };
  const b = { node: 'node-b', instance: 'b-1', started: '2024-01-01T00:00:01.000Z', clockMs: 2, count: 1 };
  await one.beat(a);
  const reading = await two.beat(b);
  assert.equal(reading.beats, [a, b]);
  assert.is(reading.storeClockMs, client.log.at(-1)!.created.getTime(), "the server's created stamp of this beat");
  assert.equal((await one.beat({ ...a, count: 2 })).beats, [{ ...a, count: 2 }, b], 'the newest beat of an instance counts');
  assert.equal((await two.beat({ ...b, count: 2 }, ['a-1'])).beats, [{ ...b, count: 2 }]);
  assert.equal((await one.beat({ ...b, instance: 'b-2' })).beats, [
    { ...b, count: 2 },
    { ...b, instance: 'b-2' },
  ]);
  assert.equal(client.metadata.get('nodebeats'), { maxCount: 256 }, 'the stream is bounded');

  assert.equal(
    (await one.readAll({ after: 0, limit: 100 })).map((e) => e.streamName),
    ['user-1'],
    'readAll hides the beats (and the $metadata event)',
  );
  assert.is(await two.headPosition(), position, 'so does the head');
  const delivered: string[] = [];
  const subscription = one.subscribeToAll({ after: 0, onEvent: (e) => delivered.push(e.streamName) });
  await drained(client.subscriptions.at(-1)!);
  assert.equal(delivered, ['user-1'], 'and the subscription');
  await subscription.unsubscribe();
  assert.equal(client.openCalls(), []);
});

test('tlsVerifyCert=false (which client 6.x ignores) is refused before the client is made, in one line naming tlsCAFile; start-up says so', async () => {
  for (const connectionString of [
    'esdb://admin:changeit@node1:2113?tls=true&tlsVerifyCert=false',
    'kurrentdb://node1:2113?tlsverifycert=false',
    'esdb+discover://cluster.example:2113?tls_verify_cert=false&tls=true',
  ]) {
    const error = await rejects(
      () => new EventStoreDbEventStore(connectionString),
      /^EVENTSTORE_CONNECTION_STRING: tlsVerifyCert=false is ignored by the EventStoreDB client .*tlsCAFile=<path> instead$/,
      connectionString,
    );
    assert.not.match(error.message, /\n|changeit/);
  }
  const error = await rejects(openStore(loadConfig({ EVENTSTORE_CONNECTION_STRING: 'esdb://admin:changeit@node1:2113?tls=true&tlsVerifyCert=false' })), StoreOpenError);
  assert.match(
    error.message,
    /^Cannot open the event store \(EventStoreDB at esdb:\/\/admin:\*\*\*@node1:2113\?tls=true&tlsVerifyCert=false\): EVENTSTORE_CONNECTION_STRING: tlsVerifyCert=false is ignored/,
  );
  assert.not.match(error.message, /\n/);
  for (const accepted of ['esdb://admin:changeit@localhost:2113?tls=true&tlsVerifyCert=true', 'esdb://localhost:2113?tls=false']) {
    void new EventStoreDbEventStore(accepted).close();
  }
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

test('EVENTSTORE_CONNECTION_STRING is checked at config time, with a message naming the variable', async () => {
  for (const ok of ['esdb://localhost:2113?tls=false', 'esdb+discover://a:b@h1:2113,h2:2113', 'kurrentdb://localhost:2113', 'kurrentdb+discover://cluster.example:2113?tls=true']) {
    assert.is(loadConfig({ EVENTSTORE_CONNECTION_STRING: ok }).eventStoreConnectionString, ok);
  }
  const refused = async (value: string) => (await rejects(() => loadConfig({ EVENTSTORE_CONNECTION_STRING: value }), ConfigError, value)).message;
  assert.match(await refused('mysql://localhost'), /EVENTSTORE_CONNECTION_STRING: must start with .*esdb:\/\/, esdb\+discover:\/\/, kurrentdb:\/\/ or kurrentdb\+discover:\/\//);
  assert.match(await refused('kurrentdb://'), /EVENTSTORE_CONNECTION_STRING: names no host after kurrentdb:\/\//);
  assert.match(await refused('esdb://user:pass@?tls=false'), /names no host/);
});

test('a connection string in a message never shows its password', () => {
  assert.is(redactedConnectionString('esdb://admin:changeit@localhost:2113?tls=false'), 'esdb://admin:***@localhost:2113?tls=false');
  assert.is(redactedConnectionString('esdb://localhost:2113'), 'esdb://localhost:2113');
});

test.run();
