// A push is one event per user: the user's actor emits one frame that the hub writes to each of
// the user's connections, unless that connection's own machine sent the id already. Connections
// here are the hub's own handles (no HTTP), so a replaying one can be started in the middle of
// a push's delivery, between two users' parts of it.
import { WorkContext } from '../../src/system/workContext.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Frame } from '../../src/realtime/clientActor.js';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { connect, signIn, withTimeout } from '../support/streamsAndSignIn.js';

/** More connections than the hub writes in one event-loop turn: the next user's part waits a turn. */
const ALICE_CONNECTIONS = 150;

async function signedIn(h: Harness, oId: string) {
  const popup = await connect(h);
  const cookie = await signIn(h, popup.clientId, oId);
  await popup.stream.next('login');
  popup.stream.close();
  const { sessions, cookies } = h.service.deps.realtime;
  return (await sessions.resolve(cookies.read(cookie)))!;
}

/** The ids of the message frames an observer got, and a promise of the one it waits for. */
function recorder() {
  const ids: number[] = [];
  let waiting: { id: number; resolve(): void } | undefined;
  return {
    ids,
    next(frame: Frame) {
      if (frame.type !== 'message') return;
      ids.push(frame.id);
      if (waiting && frame.id >= waiting.id) waiting.resolve();
    },
    reached(id: number) {
      return ids.some((seen) => seen >= id) ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { id, resolve }));
    },
  };
}

test('a connection that starts replaying in the middle of a push gets it once, from its replay, not again live', async () => {
  const h = await startHarness();
  try {
    const { hub } = h.service.deps.realtime;
    const { key } = await h.key(['message:push'], 'Game One');
    const alice = await signedIn(h, ALICE.oId);
    const bob = await signedIn(h, BOB.oId);
    const before = h.service.deps.runner.position;

    const bobLive = recorder();
    (await hub.open({ work: WorkContext.unattributed, session: bob })).start(bobLive);
    const replaying = await hub.open({ work: WorkContext.unattributed, session: bob, lastEventId: before });
    const replayed = recorder();
    let bobHadItWhenReplayStarted: boolean | undefined;
    const aliceHandles = await Promise.all(Array.from({ length: ALICE_CONNECTIONS }, () => hub.open({ work: WorkContext.unattributed, session: alice })));
    for (const handle of aliceHandles) {
      handle.start({
        next(frame) {
          if (frame.type !== 'message' || bobHadItWhenReplayStarted !== undefined) return;
          // Alice's part of the push is being written; Bob's comes in a later turn.
          bobHadItWhenReplayStarted = bobLive.ids.includes(frame.id);
          replaying.start(replayed);
        },
      });
    }

    const both = await h.post('/adm/message/push', { oIds: [ALICE.oId, BOB.oId], name: 'both', data: {} }, key);
    assert.is(both.status, 200, both.text);
    const bothId = (await h.events('message-')).at(-1)!.position;
    await withTimeout(bobLive.reached(bothId), 5000, "Bob's live connection got the push");
    const after = await h.post('/adm/message/push', { oIds: [BOB.oId], name: 'after', data: {} }, key);
    assert.is(after.status, 200, after.text);
    const afterId = (await h.events('message-')).at(-1)!.position;
    await withTimeout(replayed.reached(afterId), 5000, 'the replaying connection got the next push');

    assert.is(bobHadItWhenReplayStarted, false, "the replay started before Bob's part of the push was delivered");
    assert.equal(replayed.ids, [bothId, afterId]);
    assert.equal(bobLive.ids, [bothId, afterId]);
    for (const handle of aliceHandles) handle.close();
  } finally {
    await h.close();
  }
});

test.run();
