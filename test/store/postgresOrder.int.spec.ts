// One global order without gaps, as followers see it: writer PROCESSES append concurrently to
// random streams (some appends of several events, some fenced with an alongside stream, some with
// an expected revision that may conflict) while followers in this process subscribe live, each
// through a store of its own (its own listening connection and pool), as nodes do. At the end
// every follower has seen every event exactly once, all of them the same sequence, with
// positions strictly increasing: no follower read past an append that committed late.
//
// Some appends keep their transaction open after append_batch has drawn their positions (a
// connection of the writer's own, BEGIN … COMMIT with a pause between): later positions commit
// meanwhile, and a follower that read past the open ones would never see them.
//
// The writers are this same file, started with `--writer` (see the end of the file); each
// prints one JSON line per acknowledged append.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConcurrencyError } from '../../src/domain/errors.js';
import { PostgresEventStore } from '../../src/store/postgres.js';
import type { EventStore, EventToAppend, RecordedEvent } from '../../src/store/port.js';
import { resumingStore } from '../../src/store/resuming.js';
import { eventually } from '../support/eventually.js';
import { postgresBinaries, startCluster } from '../support/postgres.js';

const WRITERS = 4;
const APPENDS_PER_WRITER = 1500;
/** Appends each writer keeps in flight at once. */
const IN_FLIGHT = 16;
const STREAMS = 12;
const FOLLOWERS = 3;
/** The share of appends committed late, and how long their transaction stays open at most. */
const LATE_SHARE = 0.05;
const LATE_MS = 40;

const self = fileURLToPath(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** A small seeded generator (mulberry32): a failing run can be repeated with its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Acknowledged {
  writer: number;
  seq: number;
  events: number;
}

/** Event identity: which writer's which append, which of its events. */
const tag = (e: RecordedEvent) => {
  const { writer, seq, k } = e.data as { writer: number; seq: number; k: number };
  return `${writer}/${seq}/${k}`;
};

async function runWriter(connectionString: string, writer: number, seed: number, prefix: string): Promise<void> {
  const next = random(seed);
  const store = await PostgresEventStore.open({ connectionString });
  // Every writer starts at once (the parent says go when all are connected), so their appends overlap.
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const pick = () => `${prefix}-${Math.floor(next() * STREAMS)}`;
  // One connection for the late commits, one at a time, to a stream of the writer's own: the
  // open transaction holds that stream's lock, which must not stall the other writers' appends.
  const late = new pg.Client({ connectionString });
  await late.connect();
  let lateBusy = false;
  let seq = 0;
  const one = async () => {
    const mine = seq++;
    const stream = pick();
    const count = 1 + Math.floor(next() * 3);
    const events: EventToAppend[] = Array.from({ length: count }, (_, k) => ({ type: 'Ordered', data: { writer, seq: mine, k } }));
    const roll = next();
    const pause = next() * LATE_MS;
    if (roll > 1 - LATE_SHARE && !lateBusy) {
      lateBusy = true;
      try {
        await late.query('BEGIN');
        const { rows } = await late.query<{ outcome: string }>(
          'SELECT * FROM append_batch($1::text[], $2::int[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[], $8::json[], $9::json[])',
          [[`${prefix}-late-${writer}`], [-2], [null], [null], [count], [0], events.map((e) => e.type), events.map((e) => JSON.stringify(e.data)), events.map(() => null)],
        );
        if (rows[0]!.outcome !== 'ok') throw new Error(`a late append was refused: ${rows[0]!.outcome}`);
        await new Promise((resolve) => setTimeout(resolve, pause));
        await late.query('COMMIT');
      } finally {
        lateBusy = false;
      }
      process.stdout.write(`${JSON.stringify({ writer, seq: mine, events: count })}\n`);
      return;
    }
    try {
      if (roll < 0.2) {
        // Fenced: a claim stream checked (or written) with it.
        const claim = `${prefix}-claim-${writer}`;
        const current = (await store.readStream(claim)).length - 1;
        const claimEvents = next() < 0.5 ? [] : [{ type: 'Ordered', data: { writer, seq: mine, k: count } }];
        await store.append(stream, events, { alongside: { streamName: claim, expectedRevision: current < 0 ? 'no_stream' : current, events: claimEvents } });
        process.stdout.write(`${JSON.stringify({ writer, seq: mine, events: count + claimEvents.length })}\n`);
        return;
      }
      if (roll < 0.4) {
        const current = (await store.readStream(stream)).length - 1;
        await store.append(stream, events, { expectedRevision: current < 0 ? 'no_stream' : current });
      } else {
        await store.append(stream, events);
      }
      process.stdout.write(`${JSON.stringify({ writer, seq: mine, events: count })}\n`);
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error; // another writer got there first: nothing written
    }
  };
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (seq < APPENDS_PER_WRITER) await one();
    }),
  );
  await store.close();
  await late.end();
}

interface Writer {
  ready: Promise<void>;
  go(): void;
  done: Promise<Acknowledged[]>;
}

function startWriter(connectionString: string, writer: number, seed: number, prefix: string): Writer {
  const child = spawn(process.execPath, ['--import', 'tsx', self, '--writer', connectionString, String(writer), String(seed), prefix], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('ready\n')) resolve();
    });
    child.on('close', () => reject(new Error(`writer ${writer} ended before it was ready: ${err}`)));
  });
  const done = new Promise<Acknowledged[]>((resolve, reject) => {
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`writer ${writer} exited with ${code}: ${err}`));
      resolve(
        out
          .split('\n')
          .filter((line) => line && line !== 'ready')
          .map((line) => JSON.parse(line) as Acknowledged),
      );
    });
  });
  return { ready, go: () => child.stdin.end('go\n'), done };
}

const TITLE = 'concurrent writer processes, live followers: every follower sees every event once, in one order, positions rising';

if (process.argv[2] === '--writer') {
  const [connectionString, writer, seed, prefix] = process.argv.slice(3);
  await runWriter(connectionString!, Number(writer), Number(seed), prefix!);
} else {
  const test = suite('PostgreSQL global order');
  const binaries = postgresBinaries();
  if ('missing' in binaries) {
    console.log(`skipped: PostgreSQL order property — ${binaries.missing}`);
    test.skip(TITLE);
  } else {
    test(TITLE, async () => {
      const seed = Number(process.env.ORDER_SEED ?? Math.floor(Math.random() * 2 ** 31));
      // Durable commits, as in production: the time between drawing a position and committing it
      // is then the WAL flush, the window an ordering that does not hold would show in.
      const cluster = await startCluster({ settings: { fsync: 'on', synchronous_commit: 'on' } });
      const followers: EventStore[] = [];
      try {
        const seen: RecordedEvent[][] = [];
        const errors: Error[] = [];
        for (let f = 0; f < FOLLOWERS; f++) {
          const store = resumingStore(await PostgresEventStore.open({ connectionString: cluster.connectionString }));
          followers.push(store);
          const mine: RecordedEvent[] = [];
          seen.push(mine);
          store.subscribeToAll({ after: 0, onEvent: (e) => mine.push(e), onError: (e) => errors.push(e) });
        }
        const prefix = `order-${seed}`;
        const writers = Array.from({ length: WRITERS }, (_, w) => startWriter(cluster.connectionString, w, seed + w, prefix));
        await Promise.all(writers.map((w) => w.ready));
        for (const w of writers) w.go();
        const acknowledged = (await Promise.all(writers.map((w) => w.done))).flat();
        const log = await followers[0]!.readAll({ after: 0, limit: 1_000_000 });
        // A marker after every write: once each follower has it, whatever it missed or got twice before it shows.
        const marker = (await followers[0]!.append(`${prefix}-marker`, [{ type: 'Marked', data: {} }])).position;
        await eventually(() => seen.every((events) => events.some((e) => e.position === marker)), {
          what: () => `every follower to reach the marker at ${marker} (they have ${seen.map((events) => events.length).join(', ')} of ${log.length + 1} events)`,
          timeoutMs: 15_000,
        });
        console.log(`\n  seed ${seed}: ${acknowledged.length} appends acknowledged (${log.length} events) by ${WRITERS} processes, followed by ${FOLLOWERS}`);

        assert.equal(errors, [], `seed ${seed}: no follower was interrupted`);
        const expected = acknowledged.reduce((sum, a) => sum + a.events, 0);
        assert.is(log.length, expected, `seed ${seed}: the log holds exactly the acknowledged events`);
        const logTags = log.map(tag);
        assert.is(new Set(logTags).size, log.length, `seed ${seed}: no event twice in the log`);
        for (const [f, withMarker] of seen.entries()) {
          assert.is(withMarker.at(-1)!.position, marker, `seed ${seed}: the marker is the last event follower ${f} has`);
          const events = withMarker.slice(0, -1);
          for (const [i, e] of events.entries()) {
            if (i > 0) assert.ok(e.position > events[i - 1]!.position, `seed ${seed}: follower ${f}: ${e.position} after ${events[i - 1]!.position}`);
          }
          assert.equal(events.map(tag), logTags, `seed ${seed}: follower ${f} saw every event once, in the log's order`);
          assert.equal(
            events.map((e) => e.position),
            log.map((e) => e.position),
            `seed ${seed}: follower ${f}: the same positions`,
          );
        }
        for (const { writer, seq, events } of acknowledged) {
          for (let k = 0; k < events; k++) assert.ok(logTags.includes(`${writer}/${seq}/${k}`), `seed ${seed}: acknowledged event ${writer}/${seq}/${k} was delivered`);
        }
      } finally {
        for (const store of followers) await store.close();
        await cluster.destroy();
      }
    });
  }
  test.run();
}
