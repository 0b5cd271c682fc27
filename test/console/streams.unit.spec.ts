// What ends a console stream, on a bare koa server with sessions kept in memory: its session's
// logout on this node, its expiry (on time, and at the first frame after it), the operator's
// removal from CONSOLE_ADMINS, a logout read from the store, a store that cannot say; its
// lifetime; a reader that does not read. The service's own console tests cover the rest.
import type { Server } from 'node:http';
import Koa from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OperatorState } from '../../src/console/guards.js';
import type { OperatorSession } from '../../src/console/sessions.js';
import { SessionWatch } from '../../src/console/sessionWatch.js';
import { CONSOLE_STREAM_LIMITS, ConsoleStreams, type ConsoleStream, type ConsoleStreamLimits } from '../../src/console/streams.js';
import { withTimeout } from '../support/streamsAndSignIn.js';

const SESSION: OperatorSession = { sessionId: 's'.repeat(32), oId: '42', userId: 'u1', expires: new Date(Date.now() + 3_600_000).toISOString() };

class FakeSessions {
  private readonly listeners = new Set<(id: string) => void>();
  /** What the store says of the session. */
  stored: 'live' | 'ended' | 'unreachable' = 'live';

  async live(sessionId: string): Promise<OperatorSession | undefined> {
    if (this.stored === 'unreachable') throw new Error('store down');
    return this.stored === 'live' ? { ...SESSION, sessionId } : undefined;
  }

  onEnd(listener: (id: string) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  logout(sessionId: string) {
    for (const listener of this.listeners) listener(sessionId);
  }
}

interface World {
  url: string;
  sessions: FakeSessions;
  admins: Set<string>;
  /** The last stream the server opened. */
  stream(): ConsoleStream;
  close(): Promise<void>;
}

async function world(options: { session?: OperatorSession; limits?: Partial<ConsoleStreamLimits>; lifetimeMs?: number; recheckMs?: number } = {}): Promise<World> {
  const sessions = new FakeSessions();
  const admins = new Set([SESSION.oId]);
  const streams = new ConsoleStreams(new SessionWatch({ sessions, admins, clock: { now: () => new Date().toISOString() }, recheckMs: options.recheckMs }), {
    ...CONSOLE_STREAM_LIMITS,
    ...options.limits,
  });
  let last: ConsoleStream | undefined;
  const app = new Koa<OperatorState>();
  // A client that leaves mid-stream is ordinary here, as in the service.
  app.silent = true;
  app.use((ctx) => {
    ctx.state.operator = options.session ?? SESSION;
    last = streams.start(ctx, ': open\n\n', options.lifetimeMs);
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/`,
    sessions,
    admins,
    stream: () => last!,
    async close() {
      streams.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Opens a stream and reads it to its end; fails if it has not ended within `ms`. */
async function readToEnd(url: string, ms: number, meanwhile: () => void = () => undefined): Promise<string> {
  const res = await fetch(url);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  meanwhile();
  for (;;) {
    const { value, done } = await withTimeout(reader.read(), ms, 'the end of the stream');
    if (done) return text;
    text += decoder.decode(value);
  }
}

test('a logout on this node ends the stream at once', async () => {
  const w = await world();
  try {
    await readToEnd(w.url, 1_000, () => w.sessions.logout(SESSION.sessionId));
  } finally {
    await w.close();
  }
});

test('the session’s expiry ends the stream on time, with no frame to send', async () => {
  const w = await world({ session: { ...SESSION, expires: new Date(Date.now() + 300).toISOString() } });
  try {
    await readToEnd(w.url, 2_000);
  } finally {
    await w.close();
  }
});

test('an operator CONSOLE_ADMINS no longer lists gets no further frame: the stream ends instead', async () => {
  const w = await world();
  try {
    const text = await readToEnd(w.url, 1_000, () => {
      w.admins.delete(SESSION.oId);
      assert.is(w.stream().send('event: x\ndata: after\n\n'), false);
    });
    assert.not.match(text, 'after');
  } finally {
    await w.close();
  }
});

test('a logout made elsewhere is read from the store at the next check; a store that cannot say ends the stream too', async () => {
  for (const stored of ['ended', 'unreachable'] as const) {
    const w = await world({ recheckMs: 100 });
    try {
      await readToEnd(w.url, 2_000, () => (w.sessions.stored = stored));
    } finally {
      await w.close();
    }
  }
});

test('a stream with a lifetime ends then; heartbeats come meanwhile', async () => {
  const w = await world({ lifetimeMs: 400, limits: { heartbeatMs: 100 } });
  try {
    assert.match(await readToEnd(w.url, 2_000), ': heartbeat');
  } finally {
    await w.close();
  }
});

test('a reader that does not read is cut off past the buffer bound', async () => {
  const w = await world({ limits: { maxBufferedBytes: 64 * 1024 } });
  try {
    const res = await fetch(w.url);
    const reader = res.body!.getReader();
    await reader.read();
    assert.is(w.stream().send(`data: ${'x'.repeat(128 * 1024)}\n\n`), false);
    assert.is(w.stream().send('data: next\n\n'), false, 'nothing more is sent');
    await reader.cancel();
  } finally {
    await w.close();
  }
});

test.run();
