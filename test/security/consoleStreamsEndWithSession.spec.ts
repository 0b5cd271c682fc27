// Attack: keep a console stream open past the session that opened it (a follow of the event log
// kept delivering pushes' data after logout and after expiry). A stream ends when its session
// ends: at logout, at expiry (checked at every frame it sends), and the reload stream too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consolePost, signInOperator, withLiveReload, type Operator, type Reachable } from '../console/operatorSignIn.js';
import { withTimeout } from '../support/streamsAndSignIn.js';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';

interface Followed {
  /** Reads until the text holds `marker`. */
  until(marker: string): Promise<string>;
  /** Reads everything up to the stream's end; fails if it does not end within a few seconds. */
  rest(): Promise<string>;
}

async function openStream(h: Reachable, operator: Operator, path: string): Promise<Followed> {
  const res = await fetch(`${h.url}${path}`, { headers: { Cookie: operator.cookie } });
  assert.is(res.status, 200, path);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    async until(marker) {
      while (!text.includes(marker)) {
        const { value, done } = await withTimeout(reader.read(), 5_000, `"${marker}" on the stream`);
        if (done) throw new Error(`the stream ended before "${marker}"`);
        text += decoder.decode(value);
      }
      return text;
    },
    async rest() {
      let rest = '';
      for (;;) {
        const { value, done } = await withTimeout(reader.read(), 5_000, 'the end of the stream');
        if (done) return rest;
        rest += decoder.decode(value);
      }
    },
  };
}

/** Pushes a message to BOB with this marker in its data (as a game server would). */
async function push(h: Harness, apiKey: string, marker: string): Promise<void> {
  const res = await h.post('/adm/message/push', { oIds: [BOB.oId], name: 'secret', data: { marker } }, apiKey);
  assert.is(res.status, 200, res.text);
}

const FOLLOW_MESSAGES = '/console/api/events/follow?category=message&after=0';

test('a follow of the event log ends at logout and delivers nothing pushed afterwards', async () => {
  const h = await startHarness({ env: { CONSOLE_ADMINS: ALICE.oId } });
  try {
    const { key } = await h.key(['*']);
    const operator = await signInOperator(h, ALICE.oId);
    const follow = await openStream(h, operator, FOLLOW_MESSAGES);
    await push(h, key, 'before-logout');
    await follow.until('before-logout');
    assert.is((await consolePost(h, operator, '/console/api/logout')).status, 200);
    await push(h, key, 'after-logout');
    const rest = await follow.rest();
    assert.not.match(rest, 'after-logout');
  } finally {
    await h.close();
  }
});

test('a follow of the event log ends at its session’s expiry: the first frame due after it is not sent', async () => {
  const clock = movableClock();
  const h = await startHarness({ clock, env: { CONSOLE_ADMINS: ALICE.oId, CONSOLE_SESSION_TTL_MINUTES: '1' } });
  try {
    const { key } = await h.key(['*']);
    const operator = await signInOperator(h, ALICE.oId);
    const follow = await openStream(h, operator, FOLLOW_MESSAGES);
    await push(h, key, 'while-live');
    await follow.until('while-live');
    clock.advance(61_000);
    await push(h, key, 'after-expiry');
    const rest = await follow.rest();
    assert.not.match(rest, 'after-expiry');
  } finally {
    await h.close();
  }
});

test('with live reload, the reload stream ends at logout too', () =>
  withLiveReload(async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const changes = await openStream(h, operator, '/console/assets/changes');
    await changes.until(': watching');
    assert.is((await consolePost(h, operator, '/console/api/logout')).status, 200);
    await changes.rest();
  }));

test.run();
