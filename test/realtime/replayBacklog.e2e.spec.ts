// A signed-in browser that reconnects with Last-Event-ID gets every message it missed, however
// large the backlog, written as its connection takes it: a backlog far over the slow-reader limit
// neither closes the stream nor piles up in the server's buffers. Past the replay, a reader that
// stops taking live traffic is still cut off.
import { request, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { applied, connect, signIn, withTimeout } from '../support/streamsAndSignIn.js';

/** About 60 KB of `data` as JSON, under the default PUSH_MAX_BYTES (64 KiB). */
const BIG_TEXT = 'x'.repeat(60_000);

/** The bytes a stream may hold in the server for a paused reader while it replays: a high-water mark and a frame. */
const PACED_BUFFER_BOUND = 256 * 1024;

interface RawFrame {
  event: string;
  id: string;
  /** PB_CONNECT's `client_id`, or a message's `name` and `data` (these tests push `{i, text}`). */
  data: { client_id?: string; name?: string; data?: { i: number; text: string } };
}

interface RawStream {
  frames: RawFrame[];
  /** Resolves once `count` message frames arrived. */
  messages(count: number, timeoutMs: number): Promise<RawFrame[]>;
  ended: Promise<void>;
  isEnded(): boolean;
  /** Stops taking bytes from the socket (the kernel's buffers fill, then the server's). */
  pause(): void;
  resume(): void;
  req: ClientRequest;
}

/** GET /api/realtime on a socket of its own, parsing frames as they come, readable at will. */
function openRaw(h: Harness, headers: Record<string, string>): RawStream {
  const frames: RawFrame[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let response: IncomingMessage | undefined;
  let paused = false;
  let onEnded!: () => void;
  const endedPromise = new Promise<void>((resolve) => (onEnded = resolve));
  const end = () => {
    ended = true;
    onEnded();
    wake?.();
  };
  const req = request(`${h.url}/api/realtime`, { agent: false, headers }, (res) => {
    response = res;
    if (paused) res.pause();
    res.setEncoding('utf8');
    let buffer = '';
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(frame)?.[1];
        const event = field('event');
        if (event) frames.push({ event, id: field('id')!, data: JSON.parse(field('data')!) });
      }
      wake?.();
    });
    res.on('close', end);
  });
  req.on('error', end);
  req.end();
  const messageFrames = () => frames.filter((f) => f.event === 'message');
  return {
    frames,
    async messages(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (messageFrames().length < count) {
        if (ended) throw new Error(`the stream ended after ${messageFrames().length} of ${count} messages`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${messageFrames().length} of ${count} messages within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      return messageFrames().slice(0, count);
    },
    ended: endedPromise,
    isEnded: () => ended,
    pause() {
      paused = true;
      response?.pause();
    },
    resume() {
      paused = false;
      response?.resume();
    },
    req,
  };
}

/** The server's side of the next realtime stream opened (to read what it buffers). */
function nextStreamResponse(h: Harness): Promise<ServerResponse> {
  return new Promise((resolve) => {
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      if (!req.url?.startsWith('/api/realtime')) return;
      h.service.server.off('request', listener);
      resolve(res);
    };
    h.service.server.on('request', listener);
  });
}

/** Signs Alice in on a connection of her own, closes it: her session cookie and the last frame id it saw. */
async function aliceWentAway(h: Harness) {
  const popup = await connect(h);
  const cookie = await signIn(h, popup.clientId, ALICE.oId);
  const login = await popup.stream.next('login');
  popup.stream.close();
  return { cookie, lastEventId: login.id };
}

/** Pushes `count` large messages to Alice, one after another, numbered from `from`: their log positions. */
async function pushBig(h: Harness, key: string, count: number, from = 0): Promise<number[]> {
  const positions: number[] = [];
  for (let i = from; i < from + count; i++) {
    const res = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'big', data: { i, text: BIG_TEXT } }, key);
    assert.is(res.status, 200, res.text);
    positions.push((await h.events('message-')).at(-1)!.position);
  }
  return positions;
}

/** Waits until the server's side of a stream is held up by its reader (its writes wait for a drain). */
const heldUp = (res: ServerResponse) => eventually(() => res.writableNeedDrain, 'the server to wait for the paused reader');

function assertInOrder(frames: RawFrame[], positions: number[]) {
  assert.equal(
    frames.map((f) => Number(f.id)),
    positions,
    'every missed message, in log order',
  );
  assert.equal(
    frames.map((f) => f.data.data!.i),
    positions.map((_, i) => i),
  );
  assert.ok(frames.every((f) => f.data.data!.text === BIG_TEXT && f.data.name === 'big'));
}

test('a reconnect with a backlog over the slow-reader limit gets every message, in order, and the stream stays open', async () => {
  const h = await startHarness();
  let stream: RawStream | undefined;
  try {
    const { key } = await h.key(['message:push']);
    const { cookie, lastEventId } = await aliceWentAway(h);
    const positions = await pushBig(h, key, 20);

    stream = openRaw(h, { Cookie: cookie, 'Last-Event-ID': lastEventId });
    const replayed = await stream.messages(20, 10_000);
    assert.is(stream.frames[0]!.event, 'PB_CONNECT');
    assert.is(stream.frames[0]!.id, lastEventId, 'PB_CONNECT repeats the Last-Event-ID');
    assertInOrder(replayed, positions);

    // Still open, and live: the next push arrives after the replayed ones.
    const [live] = await pushBig(h, key, 1, 20);
    const all = await stream.messages(21, 5000);
    assert.is(Number(all[20]!.id), live);
    assert.ok(live! > positions.at(-1)!);
    assert.not.ok(stream.isEnded(), 'the stream stays open');
  } finally {
    stream?.req.destroy();
    await h.close();
  }
});

test('a reader that pauses in the middle of a large replay is waited for, then gets everything, and live pushes meanwhile come after it', async () => {
  const h = await startHarness();
  let stream: RawStream | undefined;
  try {
    const { key } = await h.key(['message:push']);
    const { cookie, lastEventId } = await aliceWentAway(h);
    // Several megabytes: more than the kernel's socket buffers hold for a reader that stops.
    const positions = await pushBig(h, key, 120);

    const serverSide = nextStreamResponse(h);
    stream = openRaw(h, { Cookie: cookie, 'Last-Event-ID': lastEventId });
    await stream.messages(1, 5000);
    stream.pause();
    const res = await serverSide;
    await heldUp(res);
    const during = stream.frames.filter((f) => f.event === 'message').length;
    assert.ok(during < positions.length, `the paused reader had not taken everything (${during})`);
    assert.not.ok(res.destroyed, 'the paused reader is not cut off for its replay');
    assert.ok(res.writableLength < PACED_BUFFER_BOUND, `the server holds ${res.writableLength} bytes for the paused reader`);

    // Live pushes while the replay waits: they follow it, once each.
    const live = await pushBig(h, key, 3, positions.length);
    await h.caughtUp(); // the live pushes are in the stream's queue
    stream.resume();
    const all = await stream.messages(positions.length + live.length, 20_000);
    assertInOrder(all, [...positions, ...live]);
    // One push more: once it has come, whatever came twice before it shows.
    const [marker] = await pushBig(h, key, 1, positions.length + live.length);
    const withMarker = await stream.messages(positions.length + live.length + 1, 5000);
    assert.is(Number(withMarker.at(-1)!.id), marker, 'the marker is the last message');
    assert.is(stream.frames.filter((f) => f.event === 'message').length, positions.length + live.length + 1, 'nothing twice');
    assert.not.ok(stream.isEnded(), 'the stream stays open');
  } finally {
    stream?.req.destroy();
    await h.close();
  }
});

test('past its replay, a reader that stops reading for good is cut off by live traffic', async () => {
  const h = await startHarness();
  let stream: RawStream | undefined;
  try {
    const { key } = await h.key(['message:push']);
    const { cookie, lastEventId } = await aliceWentAway(h);
    const positions = await pushBig(h, key, 5);
    stream = openRaw(h, { Cookie: cookie, 'Last-Event-ID': lastEventId });
    await stream.messages(positions.length, 5000);
    const clientId = stream.frames[0]!.data.client_id as string;
    stream.pause();
    const cutOff = applied(h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === clientId, 60_000);
    let pushes = 0;
    const pushing = (async () => {
      // Until cut off, at most well past what the kernel and the limit hold.
      while (h.service.deps.realtime.hub.size > 0 && pushes < 400) {
        await pushBig(h, key, 1);
        pushes++;
      }
    })();
    await withTimeout(cutOff, 60_000, 'the stopped reader was cut off');
    await pushing;
    assert.ok(pushes < 400, `cut off after ${pushes} live pushes`);
  } finally {
    stream?.req.destroy();
    await h.close();
  }
});

test('a reader that stops in the middle of a replay is cut off once the live traffic it holds up passes the limit', async () => {
  const h = await startHarness();
  let stream: RawStream | undefined;
  try {
    const { key } = await h.key(['message:push']);
    const { cookie, lastEventId } = await aliceWentAway(h);
    await pushBig(h, key, 120);
    const serverSide = nextStreamResponse(h);
    stream = openRaw(h, { Cookie: cookie, 'Last-Event-ID': lastEventId });
    await stream.messages(1, 5000);
    stream.pause();
    const clientId = stream.frames[0]!.data.client_id as string;
    const cutOff = applied(h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === clientId, 30_000);
    await heldUp(await serverSide);
    assert.is(h.service.deps.realtime.hub.size, 1, 'waited for while only its replay is held up');
    // 1 MiB of live frames is about 18 of these.
    let pushes = 0;
    while (h.service.deps.realtime.hub.size > 0 && pushes < 40) {
      await pushBig(h, key, 1);
      pushes++;
    }
    await withTimeout(cutOff, 5000, 'the stopped reader was cut off');
    assert.ok(pushes >= 17 && pushes <= 19, `cut off after ${pushes} live pushes held up`);
  } finally {
    stream?.req.destroy();
    await h.close();
  }
});

test.run();
