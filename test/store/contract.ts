// The one behaviour every event store adapter must show (docs/architecture.md, "Event store").
// Each adapter's spec runs this suite against a fresh store per test, as the service uses it: the adapter inside
// resumingStore, with a fault-injecting wrapper between the two (test/support/faultyStore.ts),
// which stays out of the way until a test asks it for a dropped, ended or refused subscription.
//
// The tests never assume an empty store: stream names are random and reads are narrowed to the
// test's own streams, so the suite also runs against a shared EventStoreDB whose $all already
// holds other events.
//
// An adapter without atomic multi-stream appends (EventStoreDB) must refuse every append with
// `alongside` outright, writing nothing (MultiStreamAppendUnsupportedError); the fenced-write
// tests check that much of it and no more.
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConcurrencyError } from '../../src/domain/errors.js';
import {
  EventHandlerError,
  OutOfOrderEventError,
  SubscriptionEndedError,
  SubscriptionInterruptedError,
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type NodeBeat,
  type RecordedEvent,
  type Subscription,
} from '../../src/store/port.js';
import { resumingStore, type ResumeBackoff } from '../../src/store/resuming.js';
import { eventually } from '../support/eventually.js';
import { FaultyStore } from '../support/faultyStore.js';
import { rejects } from '../support/rejects.js';

export interface StoreUnderTest {
  /** The adapter itself; the suite wraps it. */
  store: EventStore;
  cleanup(): Promise<void>;
}

interface Context {
  store: EventStore;
  faults: FaultyStore;
  cleanup(): Promise<void>;
}

/** Short waits, so that a test sees several resumes in a row. */
const BACKOFF: ResumeBackoff = { firstDelayMs: 10, maxDelayMs: 80 };

const uniqueStream = (category: string) => `${category}-${randomUUID()}`;
const event = (type: string, data: unknown = {}) => ({ type, data });

/** Subscribes and keeps the events of the given streams, plus every position delivered at all. */
function collect(store: EventStore, after: number, streams: string[]) {
  const mine = new Set(streams);
  const events: RecordedEvent[] = [];
  const allPositions: number[] = [];
  const errors: Error[] = [];
  const subscription: Subscription = store.subscribeToAll({
    after,
    onEvent(e) {
      allPositions.push(e.position);
      if (mine.has(e.streamName)) events.push(e);
    },
    onError: (error) => errors.push(error),
  });
  return { events, allPositions, errors, subscription };
}

/** Reads $all after `after` and keeps the events of the given streams. */
async function readMine(store: EventStore, after: number, streams: string[]): Promise<RecordedEvent[]> {
  const mine = new Set(streams);
  return (await store.readAll({ after, limit: 10_000 })).filter((e) => mine.has(e.streamName));
}

const ids = (events: RecordedEvent[]) => events.map((e) => `${e.streamName}@${e.revision}`);

function assertStrictlyIncreasing(positions: number[], what: string) {
  positions.forEach((p, i) => {
    assert.ok(Number.isSafeInteger(p) && p > 0, `${what}: ${p} is not a positive integer`);
    if (i > 0) assert.ok(p > positions[i - 1]!, `${what}: ${p} follows ${positions[i - 1]}`);
  });
}

/** Appends one event to a stream of its own and returns its position: a point to read from. */
async function mark(store: EventStore): Promise<number> {
  return (await store.append(uniqueStream('marker'), [event('Marked')])).position;
}

/**
 * Appends a marker and waits until a subscription has delivered it (`delivered`: every position it
 * delivered). Delivery is in position order, so by then everything before the marker has been
 * delivered as it will ever be: a missing or doubled event shows, with no time left for it.
 */
async function deliveredPastMarker(store: EventStore, delivered: number[]): Promise<void> {
  const marker = await mark(store);
  await eventually(() => delivered.includes(marker), { what: () => `the subscription to deliver the marker at ${marker} (it delivered up to ${delivered.at(-1)})` });
}

/** The interruptions among the errors a subscription reported. */
function interruptions(errors: Error[]) {
  return errors.filter((e): e is SubscriptionInterruptedError => e instanceof SubscriptionInterruptedError);
}

const values = (events: RecordedEvent[]) => events.map((e) => (e.data as { i: number }).i);

const types = async (store: EventStore, stream: string) => (await store.readStream(stream)).map((e) => e.type);

/**
 * A fenced append (one with `alongside`); undefined when the adapter refuses fenced writes as
 * unsupported, after checking that the refusal wrote nothing on either stream.
 */
async function fenced(store: EventStore, stream: string, events: EventToAppend[], options: AppendOptions): Promise<AppendResult | undefined> {
  const before = [await types(store, stream), await types(store, options.alongside!.streamName)];
  try {
    return await store.append(stream, events, options);
  } catch (error) {
    if (!(error instanceof Error && error.name === 'MultiStreamAppendUnsupportedError')) throw error;
    assert.match(error.message, /atomic multi-stream appends/);
    assert.equal([await types(store, stream), await types(store, options.alongside!.streamName)], before, 'a refused fenced write wrote nothing');
    return undefined;
  }
}

/** Whether the store takes fenced writes at all (a probe on streams of its own). */
async function takesFencedWrites(store: EventStore): Promise<boolean> {
  const claim = uniqueStream('probe-claim');
  return (await fenced(store, uniqueStream('probe'), [event('Probed')], { alongside: { streamName: claim, expectedRevision: 'no_stream', events: [] } })) !== undefined;
}

const cases: Record<string, (ctx: Context) => Promise<void>> = {
  'append then readStream returns the events in order with revisions 0..n': async ({ store }) => {
    const stream = uniqueStream('order');
    const first = await store.append(stream, [event('A', { n: 0 }), event('B', { n: 1 })]);
    const second = await store.append(stream, [event('C', { n: 2 })]);
    assert.is(first.nextExpectedRevision, 1);
    assert.is(second.nextExpectedRevision, 2);

    const events = await store.readStream(stream);
    assert.equal(
      events.map((e) => [e.streamName, e.revision, e.type, e.data]),
      [
        [stream, 0, 'A', { n: 0 }],
        [stream, 1, 'B', { n: 1 }],
        [stream, 2, 'C', { n: 2 }],
      ],
    );
    assert.is(first.position, events[1]!.position, 'an append reports the position of its last event');
    assert.is(second.position, events[2]!.position);
    for (const e of events) assert.is(new Date(e.created).toISOString(), e.created, 'created is an ISO-8601 UTC string');
  },

  'positions are strictly increasing across streams': async ({ store }) => {
    const streams = [uniqueStream('pos'), uniqueStream('pos'), uniqueStream('pos')];
    const base = await mark(store);
    const results: AppendResult[] = [];
    for (let i = 0; i < 9; i++) results.push(await store.append(streams[i % 3]!, [event('Counted', { i })]));
    assertStrictlyIncreasing(
      results.map((r) => r.position),
      'append results',
    );
    assert.ok(results[0]!.position > base);

    const all = await readMine(store, base, streams);
    assert.equal(
      all.map((e) => (e.data as { i: number }).i),
      [0, 1, 2, 3, 4, 5, 6, 7, 8],
      'readAll returns them in append order',
    );
    assertStrictlyIncreasing(
      all.map((e) => e.position),
      'readAll',
    );
    assert.equal(
      all.map((e) => e.position),
      results.map((r) => r.position),
    );
  },

  "expectedRevision 'no_stream' on an existing stream is a ConcurrencyError": async ({ store }) => {
    const stream = uniqueStream('nostream');
    await store.append(stream, [event('Created')], { expectedRevision: 'no_stream' });
    const error = await rejects(store.append(stream, [event('CreatedAgain')], { expectedRevision: 'no_stream' }), ConcurrencyError);
    assert.is(error.streamName, stream);
    assert.is(error.actual, 0);
    assert.equal(
      (await store.readStream(stream)).map((e) => e.type),
      ['Created'],
    );
  },

  'a numeric expected revision: right appends, wrong is a ConcurrencyError and writes nothing': async ({ store }) => {
    const stream = uniqueStream('numeric');
    await store.append(stream, [event('A'), event('B')]);
    const ok = await store.append(stream, [event('C')], { expectedRevision: 1 });
    assert.is(ok.nextExpectedRevision, 2);

    for (const wrong of [1, 3, 0]) {
      const error = await rejects(store.append(stream, [event('X'), event('Y')], { expectedRevision: wrong }), ConcurrencyError, `an append expecting revision ${wrong}`);
      assert.is(error.actual, 2);
    }
    const error = await rejects(store.append(uniqueStream('numeric'), [event('X')], { expectedRevision: 0 }), ConcurrencyError, 'a revision on a stream that does not exist');
    assert.is(error.actual, 'no_stream');

    assert.equal(
      (await store.readStream(stream)).map((e) => e.type),
      ['A', 'B', 'C'],
    );
  },

  "expectedRevision 'any' appends to new and existing streams (and is the default)": async ({ store }) => {
    const stream = uniqueStream('any');
    assert.is((await store.append(stream, [event('A')], { expectedRevision: 'any' })).nextExpectedRevision, 0);
    assert.is((await store.append(stream, [event('B')], { expectedRevision: 'any' })).nextExpectedRevision, 1);
    assert.is((await store.append(stream, [event('C')])).nextExpectedRevision, 2);
    assert.equal(
      (await store.readStream(stream)).map((e) => e.type),
      ['A', 'B', 'C'],
    );
  },

  'a multi-event append is atomic: contiguous in $all even with concurrent appends': async ({ store }) => {
    const batch = uniqueStream('atomic');
    const others = [uniqueStream('other'), uniqueStream('other'), uniqueStream('other'), uniqueStream('other')];
    const base = await mark(store);
    const appends = [
      store.append(others[0]!, [event('Other')]),
      store.append(others[1]!, [event('Other')]),
      store.append(batch, [event('One'), event('Two'), event('Three'), event('Four')], { expectedRevision: 'no_stream' }),
      store.append(others[2]!, [event('Other')]),
      store.append(others[3]!, [event('Other')]),
    ];
    await Promise.all(appends);

    const all = await readMine(store, base, [batch, ...others]);
    assert.is(all.length, 8);
    const at = all.findIndex((e) => e.streamName === batch);
    assert.equal(
      all.slice(at, at + 4).map((e) => [e.streamName, e.type]),
      [
        [batch, 'One'],
        [batch, 'Two'],
        [batch, 'Three'],
        [batch, 'Four'],
      ],
    );
  },

  'headPosition is the position of the newest event': async ({ store }) => {
    const before = await store.headPosition();
    const { position } = await store.append(uniqueStream('head'), [event('Head', {}), event('Head', {})]);
    assert.ok(position > before, 'an append moves the head forward');
    // Another writer may share the store: the head is at least our own last event.
    assert.ok((await store.headPosition()) >= position);
  },

  'deleteStreams removes whole streams; other streams stay; later appends get greater positions': async ({ store }) => {
    const [gone, alsoGone, kept, newest] = [uniqueStream('del'), uniqueStream('del'), uniqueStream('keep'), uniqueStream('keep')];
    await store.append(gone, [event('A'), event('B')]);
    await store.append(alsoGone, [event('A')]);
    await store.append(kept, [event('A')]);
    const { position: before } = await store.append(newest, [event('A')]);
    await store.deleteStreams([gone, alsoGone, uniqueStream('never-written')]);
    assert.equal(await store.readStream(gone), []);
    assert.equal(await store.readStream(alsoGone), []);
    assert.is((await store.readStream(kept)).length, 1);
    assert.ok((await store.headPosition()) >= before, 'the head does not move back');
    const { position: after } = await store.append(uniqueStream('after'), [event('A')]);
    assert.ok(after > before);
  },

  'readStream of an unknown stream is []': async ({ store }) => {
    assert.equal(await store.readStream(uniqueStream('unknown')), []);
  },

  'readAll pages with after (exclusive) and limit': async ({ store }) => {
    const streams = [uniqueStream('page'), uniqueStream('page')];
    const base = await mark(store);
    for (let i = 0; i < 7; i++) await store.append(streams[i % 2]!, [event('Paged', { i })]);

    const pages: RecordedEvent[][] = [];
    let after = base;
    let collected: RecordedEvent[] = [];
    while (collected.length < 7) {
      const page = await store.readAll({ after, limit: 3 });
      if (page.length === 0) break;
      assert.ok(page.length <= 3, 'a page holds at most `limit` events');
      assert.ok(page[0]!.position > after, 'a page starts after `after`');
      pages.push(page);
      collected = [...collected, ...page.filter((e) => streams.includes(e.streamName))];
      after = page.at(-1)!.position;
    }
    for (const page of pages.slice(0, -1)) assert.is(page.length, 3, 'only the last page is short');
    assert.equal(
      collected.map((e) => (e.data as { i: number }).i),
      [0, 1, 2, 3, 4, 5, 6],
    );
    assertStrictlyIncreasing(
      pages.flat().map((e) => e.position),
      'pages',
    );

    const fromThird = await readMine(store, collected[2]!.position, streams);
    assert.equal(
      fromThird.map((e) => (e.data as { i: number }).i),
      [3, 4, 5, 6],
      'after is exclusive',
    );
    assert.equal(await store.readAll({ after: collected[6]!.position, limit: 0 }), []);
  },

  'subscribeToAll from 0 catches up then goes live, in order, without gaps or duplicates': async ({ store }) => {
    const streams = [uniqueStream('live'), uniqueStream('live')];
    const base = await mark(store);
    for (let i = 0; i < 5; i++) await store.append(streams[i % 2]!, [event('Early', { i })]);
    const sub = collect(store, 0, streams);
    try {
      for (let i = 5; i < 8; i++) await store.append(streams[i % 2]!, [event('Late', { i })]);
      await store.append(streams[0]!, [event('Late', { i: 8 }), event('Late', { i: 9 })]);
      await Promise.all([10, 11, 12].map((i) => store.append(streams[1]!, [event('Late', { i })])));
      await deliveredPastMarker(store, sub.allPositions);

      assert.equal(sub.errors, []);
      assert.equal(ids(sub.events), ids(await readMine(store, base, streams)), 'the same events as $all, in its order');
      assert.equal(sub.events.map((e) => (e.data as { i: number }).i).slice(0, 10), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      assertStrictlyIncreasing(sub.allPositions, 'delivered positions');
    } finally {
      await sub.subscription.unsubscribe();
    }
  },

  'subscribeToAll from a middle position is exclusive of it': async ({ store }) => {
    const stream = uniqueStream('middle');
    const results: AppendResult[] = [];
    for (let i = 0; i < 5; i++) results.push(await store.append(stream, [event('E', { i })]));
    const sub = collect(store, results[2]!.position, [stream]);
    try {
      await store.append(stream, [event('E', { i: 5 })]);
      await deliveredPastMarker(store, sub.allPositions);
      assert.equal(
        sub.events.map((e) => e.revision),
        [3, 4, 5],
      );
      assert.ok(sub.allPositions.every((p) => p > results[2]!.position));
    } finally {
      await sub.subscription.unsubscribe();
    }
  },

  'unsubscribe stops delivery': async ({ store }) => {
    const stream = uniqueStream('unsub');
    const base = await mark(store);
    const sub = collect(store, base, [stream]);
    // A subscription left open shows when the event appended after the unsubscribe has been handed out.
    const witness = collect(store, base, [stream]);
    try {
      await store.append(stream, [event('Before')]);
      await eventually(() => sub.events.length === 1, 'the first event to be delivered');
      await sub.subscription.unsubscribe();
      await store.append(stream, [event('After')]);
      await eventually(() => witness.events.length === 2, 'the subscription left open to deliver the event appended after the unsubscribe');
      assert.equal(
        sub.events.map((e) => e.type),
        ['Before'],
      );
    } finally {
      await witness.subscription.unsubscribe();
    }
  },

  'concurrent appends with the same expected revision: exactly one wins': async ({ store }) => {
    const stream = uniqueStream('race');
    await store.append(stream, [event('Created')]);
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.append(stream, [event('Raced', { i })], { expectedRevision: 0 })));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    assert.is(won.length, 1);
    assert.is(lost.length, 7);
    for (const error of lost) assert.instance(error, ConcurrencyError);

    const events = await store.readStream(stream);
    assert.equal(
      events.map((e) => e.revision),
      [0, 1],
    );
    assert.equal(events[1]!.data, { i: outcomes.findIndex((o) => o.status === 'fulfilled') }, 'the winner is the one stored');
  },

  'metadata round-trips; absent metadata reads as undefined': async ({ store }) => {
    const stream = uniqueStream('meta');
    const metadata = { correlationId: randomUUID(), causationId: 'cmd-1', actor: { kind: 'apiKey', id: 'k1' }, tags: ['a', 'b'] };
    const base = await mark(store);
    await store.append(stream, [{ type: 'WithMeta', data: { x: 1 }, metadata }, event('WithoutMeta')]);

    const [withMeta, withoutMeta] = await store.readStream(stream);
    assert.equal(withMeta!.metadata, metadata);
    assert.is(withoutMeta!.metadata, undefined);
    const [fromAll] = await readMine(store, base, [stream]);
    assert.equal(fromAll!.metadata, metadata);
  },

  'alongside: both streams are written in one append, in position order, and subscribers get both': async ({ store }) => {
    const [main, claim] = [uniqueStream('fenced'), uniqueStream('claim')];
    await store.append(claim, [event('Claimed')]);
    const base = await mark(store);
    const sub = collect(store, base, [main, claim]);
    try {
      const result = await fenced(store, main, [event('One'), event('Two')], {
        expectedRevision: 'no_stream',
        alongside: { streamName: claim, expectedRevision: 0, events: [event('Progressed')] },
      });
      if (!result) return;
      assert.is(result.nextExpectedRevision, 1);
      assert.is(result.alongsideRevision, 1);
      assert.equal(await types(store, main), ['One', 'Two']);
      assert.equal(await types(store, claim), ['Claimed', 'Progressed']);
      const written = await readMine(store, base, [main, claim]);
      assert.is(written.length, 3);
      assertStrictlyIncreasing(
        written.map((e) => e.position),
        'the fenced append in $all',
      );
      assert.is(result.position, written.at(-1)!.position, 'the position of the last event of either stream');
      await eventually(() => sub.events.length >= 3, { what: () => `3 events (${sub.events.length} delivered)` });
      assert.equal(ids(sub.events), ids(written), 'subscribers get both streams, in position order');
    } finally {
      await sub.subscription.unsubscribe();
    }
  },

  'alongside: a stale revision on either stream is a ConcurrencyError naming that stream, and nothing is written': async ({ store }) => {
    if (!(await takesFencedWrites(store))) return;
    const [main, claim] = [uniqueStream('fenced'), uniqueStream('claim')];
    await store.append(main, [event('Started')]);
    await store.append(claim, [event('Claimed'), event('TakenOver')]);
    const attempts: Array<[string, AppendOptions, number | 'no_stream', number]> = [
      [claim, { expectedRevision: 0, alongside: { streamName: claim, expectedRevision: 0, events: [event('Progressed')] } }, 0, 1],
      [claim, { expectedRevision: 0, alongside: { streamName: claim, expectedRevision: 'no_stream', events: [event('Progressed')] } }, 'no_stream', 1],
      [main, { expectedRevision: 5, alongside: { streamName: claim, expectedRevision: 1, events: [event('Progressed')] } }, 5, 0],
    ];
    for (const [stale, options, expected, actual] of attempts) {
      const error = await rejects(store.append(main, [event('Fenced')], options), ConcurrencyError, `the append with a stale revision on ${stale}`);
      assert.is(error.streamName, stale, 'the error names the stream that did not match');
      assert.is(error.expected, expected);
      assert.is(error.actual, actual);
    }
    assert.equal(await types(store, main), ['Started'], 'nothing on the main stream');
    assert.equal(await types(store, claim), ['Claimed', 'TakenOver'], 'nothing on the alongside stream');
  },

  'alongside without events is a pure check of that stream': async ({ store }) => {
    const [main, claim, missing] = [uniqueStream('fenced'), uniqueStream('claim'), uniqueStream('claim')];
    await store.append(claim, [event('Claimed')]);
    const checked = await fenced(store, main, [event('One')], { alongside: { streamName: claim, expectedRevision: 0, events: [] } });
    if (!checked) return;
    assert.is(checked.nextExpectedRevision, 0);
    assert.is(checked.alongsideRevision, 0, 'the checked stream is where it was');
    assert.equal(await types(store, claim), ['Claimed'], 'nothing written on the checked stream');
    assert.equal(await types(store, main), ['One']);
    assert.is(checked.position, (await store.readStream(main))[0]!.position);

    await store.append(main, [event('Two')], { alongside: { streamName: missing, expectedRevision: 'no_stream', events: [] } });
    assert.equal(await store.readStream(missing), [], "a check of 'no_stream' creates nothing");

    const error = await rejects(store.append(main, [event('Three')], { alongside: { streamName: claim, expectedRevision: 'no_stream', events: [] } }), ConcurrencyError);
    assert.is(error.streamName, claim);
    assert.equal(await types(store, main), ['One', 'Two'], 'a failed check writes nothing');
  },

  'alongside: of concurrent appends fenced on the same revision, exactly one wins': async ({ store }) => {
    if (!(await takesFencedWrites(store))) return;
    const claim = uniqueStream('claim');
    await store.append(claim, [event('Claimed')]);
    const mains = Array.from({ length: 6 }, () => uniqueStream('fenced'));
    const outcomes = await Promise.allSettled(
      mains.map((main, i) => store.append(main, [event('Fenced', { i })], { alongside: { streamName: claim, expectedRevision: 0, events: [event('Progressed', { i })] } })),
    );
    const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
    assert.is(won.length, 1, 'one append wins the claim');
    for (const o of outcomes) if (o.status === 'rejected') assert.instance(o.reason, ConcurrencyError);
    const claimed = await store.readStream(claim);
    assert.equal(
      claimed.map((e) => e.data),
      [{}, { i: won[0] }],
    );
    for (const [i, main] of mains.entries()) assert.is((await store.readStream(main)).length, i === won[0] ? 1 : 0);
  },

  'beat: every instance reads each one’s last beat; forget removes an instance': async ({ store }) => {
    const node = uniqueStream('node');
    const [a, b] = [randomUUID(), randomUUID()];
    const started = new Date().toISOString();
    const beatOf = (instance: string, count: number): NodeBeat => ({ node, instance, started, clockMs: Date.now(), count });
    const mine = (beats: NodeBeat[]) =>
      beats.filter((beat) => beat.instance === a || beat.instance === b).sort((x, y) => (x.instance === a ? -1 : 1) - (y.instance === a ? -1 : 1));

    const first = beatOf(a, 1);
    assert.equal(mine((await store.beat(first)).beats), [first]);
    const second = beatOf(b, 1);
    const fromB = await store.beat(second);
    assert.equal(mine(fromB.beats), [first, second], 'the second instance sees both');
    assert.ok(fromB.storeClockMs === undefined || Math.abs(fromB.storeClockMs - Date.now()) < 60_000, `store clock ${fromB.storeClockMs}`);
    const third = beatOf(a, 2);
    assert.equal(mine((await store.beat(third)).beats), [third, second], 'a beat replaces the instance’s previous one');

    const forgetting = beatOf(b, 2);
    assert.equal(mine((await store.beat(forgetting, [a])).beats), [forgetting], 'a forgotten instance is gone');
    const later = beatOf(b, 3);
    assert.equal(mine((await store.beat(later)).beats), [later], 'and stays gone');
  },

  'data comes back as parsed JSON (nested objects, arrays, unicode)': async ({ store }) => {
    const stream = uniqueStream('json');
    const data = {
      name: '摸鱼派 — fishpi 🐟',
      escapes: 'quote " backslash \\ newline \n tab \t',
      nested: { deeper: { list: [1, 2.5, -3, { ok: true }], empty: {}, none: null } },
      flags: [true, false],
      big: Number.MAX_SAFE_INTEGER,
    };
    const base = await mark(store);
    await store.append(stream, [event('Json', data)]);
    assert.equal((await store.readStream(stream))[0]!.data, data);
    assert.equal((await readMine(store, base, [stream]))[0]!.data, data);

    const sub = collect(store, base, [stream]);
    try {
      await eventually(() => sub.events.length === 1, 'the event to be delivered');
      assert.equal(sub.events[0]!.data, data);
    } finally {
      await sub.subscription.unsubscribe();
    }
  },
};

const faultCases: Record<string, (ctx: Context) => Promise<void>> = {
  'a dropped subscription is reported and resumes from the last delivered position: no gap, no duplicate': async ({ store, faults }) => {
    const stream = uniqueStream('drop');
    const sub = collect(store, await mark(store), [stream]);
    try {
      for (let i = 0; i < 3; i++) await store.append(stream, [event('E', { i })]);
      await eventually(() => sub.events.length === 3, { what: () => `3 events (${sub.events.length} delivered)` });
      const lastDelivered = sub.allPositions.at(-1)!;
      faults.dropSubscriptions(new Error('connection reset by peer'));
      for (let i = 3; i < 6; i++) await store.append(stream, [event('E', { i })]);
      await deliveredPastMarker(store, sub.allPositions);

      assert.equal(values(sub.events), [0, 1, 2, 3, 4, 5]);
      assertStrictlyIncreasing(sub.allPositions, 'delivered positions');
      const [interrupted, ...more] = interruptions(sub.errors);
      assert.equal(more, [], 'one interruption');
      assert.is(interrupted!.cause.message, 'connection reset by peer');
      assert.is(interrupted!.after, lastDelivered, 'it resumes after the last delivered event');
      assert.is(interrupted!.attempt, 1);
      assert.is(interrupted!.retryInMs, BACKOFF.firstDelayMs);
      assert.is(faults.subscribedAfter.at(-1), lastDelivered, 'the new subscription starts there');
    } finally {
      await sub.subscription.unsubscribe();
    }
  },

  'an end of the stream is reported, never silent, and the subscription resumes': async ({ store, faults }) => {
    const stream = uniqueStream('end');
    const sub = collect(store, await mark(store), [stream]);
    try {
      await store.append(stream, [event('E', { i: 0 })]);
      await eventually(() => sub.events.length === 1, 'the first event to be delivered');
      faults.endSubscriptions();
      await store.append(stream, [event('E', { i: 1 })]);
      await eventually(() => sub.events.length === 2, 'the event after the end to be delivered');
      const [interrupted] = interruptions(sub.errors);
      assert.instance(interrupted!.cause, SubscriptionEndedError);
      assert.equal(values(sub.events), [0, 1]);
    } finally {
      await sub.subscription.unsubscribe();
    }
  },

  'while the store refuses to subscribe, resumes back off (doubling, capped) and go on until one succeeds': async ({ store, faults }) => {
    const stream = uniqueStream('refused');
    const sub = collect(store, await mark(store), [stream]);
    try {
      await store.append(stream, [event('E', { i: 0 })]);
      await eventually(() => sub.events.length === 1, 'the first event to be delivered');
      faults.subscribeFailure = new Error('unavailable');
      faults.dropSubscriptions();
      await store.append(stream, [event('E', { i: 1 })]);
      await eventually(() => interruptions(sub.errors).length >= 5, { what: () => `5 interruptions (${interruptions(sub.errors).length} seen)` });
      assert.equal(
        interruptions(sub.errors)
          .slice(0, 5)
          .map((e) => [e.attempt, e.retryInMs]),
        [
          [1, 10],
          [2, 20],
          [3, 40],
          [4, 80],
          [5, 80],
        ],
      );
      faults.subscribeFailure = undefined;
      await eventually(() => sub.events.length === 2, 'the event appended during the outage to be delivered');
      await store.append(stream, [event('E', { i: 2 })]);
      await eventually(() => sub.events.length === 3, 'live delivery to go on');
      assert.equal(values(sub.events), [0, 1, 2]);

      const before = interruptions(sub.errors).length;
      faults.dropSubscriptions();
      await eventually(() => interruptions(sub.errors).length > before, 'the next drop to be reported');
      assert.is(interruptions(sub.errors)[before]!.attempt, 1, 'a delivered event starts the backoff over');
    } finally {
      await sub.subscription.unsubscribe();
    }
  },

  'an event at or before the last delivered position is reported as out of order and not delivered again': async ({ store, faults }) => {
    const stream = uniqueStream('repeat');
    const sub = collect(store, await mark(store), [stream]);
    try {
      await store.append(stream, [event('E', { i: 0 })]);
      await store.append(stream, [event('E', { i: 1 })]);
      await eventually(() => sub.events.length === 2, { what: () => `2 events (${sub.events.length} delivered)` });
      faults.repeatLastEvent();
      await store.append(stream, [event('E', { i: 2 })]);
      await deliveredPastMarker(store, sub.allPositions);
      assert.equal(values(sub.events), [0, 1, 2]);
      assertStrictlyIncreasing(sub.allPositions, 'delivered positions');
      const [interrupted] = interruptions(sub.errors);
      assert.instance(interrupted?.cause, OutOfOrderEventError);
      assert.is((interrupted!.cause as OutOfOrderEventError).position, sub.events[1]!.position);
    } finally {
      await sub.subscription.unsubscribe();
    }
  },

  'a handler that throws is reported with its event, and delivery goes on with the next event': async ({ store, faults }) => {
    const stream = uniqueStream('throws');
    const seen: number[] = [];
    const delivered: number[] = [];
    const errors: Error[] = [];
    const subscription = store.subscribeToAll({
      after: await mark(store),
      onEvent(e) {
        delivered.push(e.position);
        if (e.streamName !== stream) return;
        seen.push((e.data as { i: number }).i);
        if ((e.data as { i: number }).i === 1) throw new Error('handler bug');
      },
      onError: (error) => errors.push(error),
    });
    try {
      for (let i = 0; i < 3; i++) await store.append(stream, [event('E', { i })]);
      await deliveredPastMarker(store, delivered);
      assert.equal(seen, [0, 1, 2], 'the event is not delivered again');
      assert.is(errors.length, 1);
      assert.instance(errors[0], EventHandlerError);
      assert.is((errors[0] as EventHandlerError).cause.message, 'handler bug');
      assert.equal((errors[0] as EventHandlerError).event.data, { i: 1 });
      assert.is(faults.subscribedAfter.length, 1, 'no resume: the subscription itself was fine');
    } finally {
      await subscription.unsubscribe();
    }
  },

  'unsubscribing while a resume waits ends it: nothing is delivered and nothing subscribes again': async ({ store, faults }) => {
    const stream = uniqueStream('gone');
    const base = await mark(store);
    const sub = collect(store, base, [stream]);
    // Dropped right after `sub`, the witness waits as long to resume, so its resume comes after the
    // one `sub` would make (timers of one duration fire in order): once it has resumed and
    // delivered the event, `sub` had its chance.
    const witness = collect(store, base, [stream]);
    try {
      await eventually(() => faults.liveSubscriptions === 2, 'both subscriptions to be live');
      const subscribed = faults.subscribedAfter.length;
      faults.dropSubscriptions();
      await sub.subscription.unsubscribe();
      await store.append(stream, [event('E', { i: 0 })]);
      await eventually(() => witness.events.length === 1, 'the witness to resume and deliver the event');
      assert.equal(sub.events, []);
      assert.is(faults.subscribedAfter.length, subscribed + 1, 'only the witness subscribed again');
      assert.is(faults.liveSubscriptions, 1);
    } finally {
      await witness.subscription.unsubscribe();
    }
  },
};

/** The conformance suite, one fresh store per test. */
export function eventStoreContract(name: string, makeStore: () => Promise<StoreUnderTest>) {
  const test = suite<Context>(name);
  test.before.each(async (ctx) => {
    const { store, cleanup } = await makeStore();
    ctx.faults = new FaultyStore(store);
    ctx.store = resumingStore(ctx.faults, BACKOFF);
    ctx.cleanup = cleanup;
  });
  test.after.each(async (ctx) => {
    await ctx.cleanup();
  });
  for (const [title, run] of Object.entries({ ...cases, ...faultCases })) test(title, run);
  return test;
}

/** The same suite with every test registered as skipped, for an adapter that cannot run here. */
export function skippedEventStoreContract(name: string) {
  const test = suite(name);
  for (const title of Object.keys({ ...cases, ...faultCases })) test.skip(title);
  return test;
}
