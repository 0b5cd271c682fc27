// The paced replay without HTTP: a stream that takes bytes only when the test drains it. Frames
// leave until its buffer is over the high-water mark, then wait for 'drain'; live frames held
// meanwhile follow the backlog once each; held live frames past the slow-reader bound cut off.
import { EventEmitter } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecentMessage } from '../../src/projections/recentMessages.js';
import { Replay, type LiveFrame, type ReplayTarget } from '../../src/realtime/replay.js';
import { formatFrame, SLOW_READER_MAX_BYTES } from '../../src/realtime/sse.js';

const HIGH_WATER_MARK = 16 * 1024;
const TEXT = 'x'.repeat(60_000);

/** A response whose socket takes nothing until drained: what a reader that stopped looks like. */
class HeldStream extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  destroyed = false;
  write(text: string): void {
    this.writableLength += text.length;
    if (this.writableLength >= HIGH_WATER_MARK) this.writableNeedDrain = true;
  }
  /** The reader took everything. */
  drain(): void {
    this.writableLength = 0;
    if (!this.writableNeedDrain) return;
    this.writableNeedDrain = false;
    this.emit('drain');
  }
  destroy(): void {
    this.destroyed = true;
  }
}

const message = (position: number, text = TEXT): RecentMessage => ({ position, at: 0, userIds: new Set(['u1']), appId: 'a', name: 'n', data: { text }, bytes: 0 });
const liveFrame = (id: number, text = TEXT): LiveFrame => ({ type: 'message', id, data: { app_id: 'a', name: 'n', data: { text } } });

/** A connection as the hub makes it: a frame is written unless its id was sent already. */
function target(stream: HeldStream | undefined) {
  const written: number[] = [];
  let lastId = 0;
  const state = { closed: false, done: false, wasCutOff: false };
  const write = (frame: LiveFrame) => {
    if (frame.id <= lastId) return;
    lastId = frame.id;
    written.push(frame.id);
    stream?.write(formatFrame(frame));
  };
  const connection: ReplayTarget & typeof state = Object.assign(state, {
    replayMessage: (m: RecentMessage) => write({ type: 'message', id: m.position, data: { app_id: m.appId, name: m.name, data: m.data } }),
    release: write,
    replayed: () => {
      state.done = true;
    },
    cutOff: () => {
      state.wasCutOff = true;
    },
  });
  return { connection, written };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('frames leave until the buffer passes its high-water mark, then one batch per drain, in order', async () => {
  const stream = new HeldStream();
  const { connection, written } = target(stream);
  const backlog = [10, 20, 30, 40, 50].map((p) => message(p));
  new Replay(backlog, stream, connection).start();
  assert.equal(written, [10], 'one 60 KB frame fills the buffer');
  await turn();
  assert.equal(written, [10], 'nothing more until the reader takes it');
  assert.ok(stream.writableLength < HIGH_WATER_MARK + 61_000);
  for (let i = 2; i <= 5; i++) {
    stream.drain();
    assert.equal(written, [10, 20, 30, 40, 50].slice(0, i));
  }
  assert.not.ok(connection.done);
  stream.drain();
  assert.ok(connection.done, 'done once the last frame was taken');
});

test('small frames go together up to the high-water mark', () => {
  const stream = new HeldStream();
  const { connection, written } = target(stream);
  const backlog = Array.from({ length: 50 }, (_, i) => message(i + 1, 'y'.repeat(1000)));
  new Replay(backlog, stream, connection).start();
  const first = written.length;
  assert.ok(first > 1 && first < 50, `${first} frames before the first drain`);
  stream.drain();
  assert.ok(written.length > first);
});

test('live frames held during the replay follow it once each: those the backlog carries are not sent twice, later ones are not lost', () => {
  const stream = new HeldStream();
  const { connection, written } = target(stream);
  const replay = new Replay([message(10), message(20), message(30)], stream, connection);
  replay.start();
  replay.hold(liveFrame(20));
  replay.hold(liveFrame(30));
  replay.hold(liveFrame(40));
  replay.hold(liveFrame(50));
  for (let i = 0; i < 6; i++) stream.drain();
  assert.equal(written, [10, 20, 30, 40, 50]);
  assert.ok(connection.done);
});

test('held live frames past the slow-reader bound cut the reader off; the backlog alone never does', () => {
  const stream = new HeldStream();
  const { connection, written } = target(stream);
  // A backlog far larger than the bound: waited for, not cut off.
  const backlog = Array.from({ length: 100 }, (_, i) => message(i + 1));
  const replay = new Replay(backlog, stream, connection);
  replay.start();
  assert.not.ok(connection.wasCutOff);
  const frameBytes = formatFrame(liveFrame(1000)).length;
  const fit = Math.floor(SLOW_READER_MAX_BYTES / frameBytes);
  for (let i = 1; i <= fit; i++) replay.hold(liveFrame(1000 + i));
  assert.not.ok(connection.wasCutOff, `${fit} frames fit in the bound`);
  replay.hold(liveFrame(2000));
  assert.ok(connection.wasCutOff);
  stream.drain();
  assert.equal(written, [1], 'nothing more is written once cut off');
});

test('without a stream the replay is written at once, a turn at a time', async () => {
  const { connection, written } = target(undefined);
  const backlog = Array.from({ length: 250 }, (_, i) => message(i + 1, 'z'));
  new Replay(backlog, undefined, connection).start();
  assert.is(written.length, 100);
  await turn();
  await turn();
  await turn();
  assert.is(written.length, 250);
  assert.ok(connection.done);
});

test('stopped or closed, it writes nothing more', async () => {
  const stream = new HeldStream();
  const { connection, written } = target(stream);
  const replay = new Replay([message(10), message(20)], stream, connection);
  replay.start();
  replay.stop();
  stream.drain();
  assert.equal(written, [10]);

  const other = target(stream);
  new Replay([message(10), message(20)], stream, other.connection).start();
  other.connection.closed = true;
  stream.drain();
  await turn();
  assert.equal(other.written, [10]);
  assert.not.ok(other.connection.done);
});

test.run();
