// A push to more connections than the hub serves in one event-loop turn is delivered over
// several turns; what the log holds after it (more pushes, a logout) must not overtake it.
import { WorkContext } from '../../src/system/workContext.js';
import { request, type ClientRequest } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { streams as streamNames, type MessagePushed } from '../../src/domain/events.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { connect, signIn, withTimeout } from '../support/streamsAndSignIn.js';

const CONNECTIONS = 250;

interface RawStream {
  /** `event` and `id` of every frame so far. */
  frames: Array<{ event: string; id: string }>;
  connected: Promise<void>;
  ended: Promise<void>;
  req: ClientRequest;
}

/** GET /api/realtime with the cookie on a socket of its own, collecting frames until it ends. */
function openRaw(h: Harness, cookie: string): RawStream {
  const frames: RawStream['frames'] = [];
  let connected!: () => void;
  let ended!: () => void;
  const stream: RawStream = {
    frames,
    connected: new Promise((resolve) => (connected = resolve)),
    ended: new Promise((resolve) => (ended = resolve)),
    req: request(`${h.url}/api/realtime`, { agent: false, headers: { Cookie: cookie } }, (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(frame)?.[1];
          const event = field('event');
          if (event) frames.push({ event, id: field('id')! });
          if (event === 'PB_CONNECT') connected();
        }
      });
      res.on('close', ended);
    }),
  };
  stream.req.on('error', ended);
  stream.req.end();
  return stream;
}

test('pushes and a logout committed together reach every one of many connections in log order; the logout ends them after the pushes', async () => {
  const h = await startHarness({ env: { REALTIME_MAX_CONNECTIONS_PER_IP: String(CONNECTIONS + 10), REALTIME_CONNECTS_PER_SECOND: '0' } });
  const popup = await connect(h);
  let streams: RawStream[] = [];
  try {
    const { key } = await h.key(['message:push'], 'Game One');
    const cookie = await signIn(h, popup.clientId, ALICE.oId);
    await popup.stream.next('login');
    streams = Array.from({ length: CONNECTIONS }, () => openRaw(h, cookie));
    await withTimeout(Promise.all(streams.map((s) => s.connected)), 10_000, 'every stream connected');
    assert.ok(streams.every((s) => s.frames[0]!.event === 'PB_CONNECT'));

    const push = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'first', data: {} }, key);
    assert.is(push.status, 200, push.text);
    // Appended in one turn, so that they commit together and the hub gets them one after another
    // while the first is still being delivered: two more pushes and the logout.
    const { store, realtime } = h.service.deps;
    const first = (await h.events('message-')).at(-1)!.data as MessagePushed['data'];
    const sessionId = ((await h.events('session-')).find((e) => e.type === 'SessionStarted')!.data as { sessionId: string }).sessionId;
    const again = (name: string) => store.append(streamNames.message(`${first.messageId}-${name}`), [{ type: 'MessagePushed', data: { ...first, name } }]);
    await Promise.all([again('second'), again('third'), realtime.sessions.end(WorkContext.unattributed, sessionId)]);
    await withTimeout(Promise.all(streams.map((s) => s.ended)), 10_000, 'every stream ended by the logout');

    const events = await h.events();
    const loggedOut = events.find((e) => e.type === 'SessionEnded')!.position;
    const expected = events.filter((e) => e.type === 'MessagePushed').map((e) => String(e.position));
    assert.is(expected.length, 3);
    assert.ok(Number(expected[2]) < loggedOut, 'the logout was recorded after the pushes');
    for (const stream of streams) {
      assert.equal(
        stream.frames.filter((f) => f.event === 'message').map((f) => f.id),
        expected,
      );
    }
  } finally {
    popup.stream.close();
    for (const stream of streams) stream.req.destroy();
    await h.close();
  }
});

test.run();
