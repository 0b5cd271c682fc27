// docs/api.md "POST /adm/message/push" and the `message` frame: a push reaches every open connection of every targeted user,
// through the store's subscription; a reconnect with Last-Event-ID gets what it missed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';

async function pusher(h: Harness) {
  const { key } = await h.key(['message:push'], 'Game One');
  return async (body: { oIds?: string[]; userIds?: string[]; name: string; data: Record<string, unknown> }) => {
    const res = await h.post('/adm/message/push', body, key);
    assert.is(res.status, 200, res.text);
    assert.equal([res.body.code, res.body.msg, Object.keys(res.body.data)], [0, 'success', ['online', 'offline', 'unknown']]);
    const pushed = (await h.events('message-')).at(-1)!;
    return String(pushed.position);
  };
}

/** Alice signed in through the popup; her session cookie and internal id. */
async function aliceOnline(h: Harness) {
  const popup = await connect(h);
  const cookie = await signIn(h, popup.clientId, ALICE.oId);
  const login = await popup.stream.next('login');
  return { popup, cookie, userId: login.data.user.id as string };
}

test('a push by oIds arrives as a message frame {app_id, name, data} whose id is the event position', async () => {
  const h = await startHarness();
  try {
    const push = await pusher(h);
    const { popup } = await aliceOnline(h);
    const id = await push({ oIds: [ALICE.oId], name: 'reward', data: { points: 5, text: 'line one\nline two' } });
    const frame = await popup.stream.next('message');
    assert.is(frame.id, id);
    assert.equal(frame.data, { app_id: 'game-one', name: 'reward', data: { points: 5, text: 'line one\nline two' } });
    popup.stream.close();
  } finally {
    await h.close();
  }
});

test('a push by userIds arrives too; a user named in both lists gets it once per connection', async () => {
  const h = await startHarness();
  try {
    const push = await pusher(h);
    const { popup, userId } = await aliceOnline(h);
    const byId = await push({ userIds: [userId], name: 'by-id', data: {} });
    assert.is((await popup.stream.next('message')).id, byId);
    await push({ oIds: [ALICE.oId], userIds: [userId], name: 'both', data: {} });
    await push({ oIds: [ALICE.oId], name: 'after', data: {} });
    assert.is((await popup.stream.next('message')).data.name, 'both');
    assert.is((await popup.stream.next('message')).data.name, 'after'); // not a second 'both'
    popup.stream.close();
  } finally {
    await h.close();
  }
});

test('a user with three tabs gets the message three times, once in each', async () => {
  const h = await startHarness();
  try {
    const push = await pusher(h);
    const { popup, cookie } = await aliceOnline(h);
    popup.stream.close();
    const tabs = await Promise.all([connect(h, { cookie }), connect(h, { cookie }), connect(h, { cookie })]);
    assert.ok(tabs.every((t) => t.hello.data.login_status === true));
    await push({ oIds: [ALICE.oId], name: 'hello', data: { n: 1 } });
    await push({ oIds: [ALICE.oId], name: 'barrier', data: {} });
    for (const tab of tabs) {
      assert.is((await tab.stream.next('message')).data.name, 'hello');
      assert.is((await tab.stream.next('message')).data.name, 'barrier');
    }
    assert.is(tabs.flatMap((t) => t.stream.frames).filter((f) => f.event === 'message' && f.data.name === 'hello').length, 3);
    for (const tab of tabs) tab.stream.close();
  } finally {
    await h.close();
  }
});

test('offline users get nothing and nothing fails; anonymous connections get nothing', async () => {
  const h = await startHarness();
  try {
    const push = await pusher(h);
    const { popup } = await aliceOnline(h);
    const anonymous = await connect(h);
    await push({ oIds: [BOB.oId], name: 'for-bob', data: {} }); // known to the platform, never signed in
    await push({ oIds: ['999999'], userIds: ['nobody000000000'], name: 'for-nobody', data: {} });
    await push({ oIds: [ALICE.oId], name: 'for-alice', data: {} });
    assert.is((await popup.stream.next('message')).data.name, 'for-alice'); // the first message alice sees
    // The anonymous connection: the next frame after PB_CONNECT is its own login, nothing before.
    await signIn(h, anonymous.clientId, BOB.oId);
    assert.is((await anonymous.stream.next('login')).data.user.oId, BOB.oId);
    popup.stream.close();
    anonymous.stream.close();
  } finally {
    await h.close();
  }
});

test('reconnecting with Last-Event-ID replays the missed messages of the user, in order, then live ones, no duplicates', async () => {
  const h = await startHarness();
  try {
    const push = await pusher(h);
    const { popup, cookie } = await aliceOnline(h);
    const bob = await connect(h);
    await signIn(h, bob.clientId, BOB.oId);
    await push({ oIds: [ALICE.oId], name: 'm1', data: {} });
    const seen = await popup.stream.next('message');
    popup.stream.close(); // the network blips
    const m2 = await push({ oIds: [ALICE.oId], name: 'm2', data: { i: 2 } });
    await push({ oIds: [BOB.oId], name: 'not-for-alice', data: {} });
    const m3 = await push({ oIds: [ALICE.oId, BOB.oId], name: 'm3', data: { i: 3 } });

    const back = await connect(h, { cookie, lastEventId: seen.id });
    assert.is(back.hello.data.login_status, true);
    assert.is(back.hello.id, seen.id);
    const replayed = [await back.stream.next('message'), await back.stream.next('message')];
    assert.equal(
      replayed.map((f) => [f.id, f.data.name]),
      [
        [m2, 'm2'],
        [m3, 'm3'],
      ],
    );
    const m4 = await push({ oIds: [ALICE.oId], name: 'm4', data: {} });
    const live = await back.stream.next('message');
    assert.equal([live.id, live.data.name], [m4, 'm4']);
    assert.equal(
      back.stream.frames.map((f) => f.event),
      ['PB_CONNECT', 'message', 'message', 'message'],
    );
    back.stream.close();
    bob.stream.close();
  } finally {
    await h.close();
  }
});

test('the lastEventId query parameter works like the header (for clients that cannot set headers)', async () => {
  const h = await startHarness();
  try {
    const push = await pusher(h);
    const { popup, cookie } = await aliceOnline(h);
    const connectedAt = popup.stream.frames[0]!.id; // PB_CONNECT
    popup.stream.close();
    const m1 = await push({ oIds: [ALICE.oId], name: 'm1', data: {} });
    const back = await connect(h, { cookie, query: `?lastEventId=${connectedAt}` });
    const frame = await back.stream.next('message');
    assert.equal([frame.id, frame.data.name], [m1, 'm1']);
    back.stream.close();
  } finally {
    await h.close();
  }
});

test('replay stops at the retention window (REALTIME_REPLAY_MS); without a session nothing is replayed', async () => {
  const clock = movableClock();
  const h = await startHarness({ clock, env: { REALTIME_REPLAY_MS: '60000' } });
  try {
    const push = await pusher(h);
    const { popup, cookie } = await aliceOnline(h);
    const from = popup.stream.frames.at(-1)!.id; // the login frame
    popup.stream.close();
    await push({ oIds: [ALICE.oId], name: 'too-old', data: {} });
    clock.advance(61_000);
    const recent = await push({ oIds: [ALICE.oId], name: 'recent', data: {} });
    const back = await connect(h, { cookie, lastEventId: from });
    const frame = await back.stream.next('message');
    assert.equal([frame.id, frame.data.name], [recent, 'recent']);

    // An anonymous reconnect replays nothing; its PB_CONNECT keeps the id from going backwards.
    const anonymous = await connect(h, { lastEventId: from });
    assert.is(anonymous.hello.data.login_status, false);
    assert.ok(Number(anonymous.hello.id) >= Number(recent));
    await signIn(h, anonymous.clientId, BOB.oId);
    assert.is((await anonymous.stream.next('login')).data.user.oId, BOB.oId);
    back.stream.close();
    anonymous.stream.close();
  } finally {
    await h.close();
  }
});

test('a Last-Event-ID beyond the log is not trusted: the connection starts at the current position and gets live messages', async () => {
  const h = await startHarness();
  try {
    const push = await pusher(h);
    const { popup, cookie } = await aliceOnline(h);
    popup.stream.close();
    const back = await connect(h, { cookie, lastEventId: '999999999' });
    assert.is(back.hello.id, String(h.service.deps.runner.position));
    const live = await push({ oIds: [ALICE.oId], name: 'live', data: {} });
    assert.is((await back.stream.next('message')).id, live);
    back.stream.close();
  } finally {
    await h.close();
  }
});

test.run();
