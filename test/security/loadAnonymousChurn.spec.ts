// Attack: connect and leave, and open login pages, over and over without signing in. A login page
// records nothing; each visit's connection appends two events (ClientConnected,
// ClientDisconnected), which must not stay in the log for ever. Ended anonymous client streams and
// finished sign-in attempts are deleted ANONYMOUS_RETENTION_MS after they end (an attempt, after
// its state expired too); what is live or signed in stays.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { movableClock } from '../support/movableClock.js';
import { applied, connect, signIn, visit } from '../support/streamsAndSignIn.js';

/** ANONYMOUS_RETENTION_MS's default. */
const RETENTION_MS = 120_000;
const LOGIN_STATE_TTL_MS = 600_000;

/** Connects anonymously, opens the login page `logins` times, then leaves; waits for the disconnect. */
async function visitAndLeave(h: Harness, logins = 1) {
  const { stream, clientId, binding } = await connect(h);
  const gone = applied(h, (e) => e.type === 'ClientDisconnected' && (e.data as { clientId: string }).clientId === clientId);
  try {
    // In the browser that holds the connection, the login page goes straight to the platform.
    for (let i = 0; i < logins; i++) assert.is((await visit(`${h.url}/fishpi/login?client_id=${clientId}`, { Cookie: binding! })).status, 302);
  } finally {
    stream.close();
  }
  await gone;
  return clientId;
}

const streamsOf = async (h: Harness) => new Set((await h.events()).map((e) => e.streamName));

test('30 anonymous visits with login pages leave nothing once the retention has passed; live and signed-in clients stay', async () => {
  const clock = movableClock();
  // 60 login pages from one address: past the bound per address, which is not what this is about.
  const h = await startHarness({ clock, env: { SIGN_IN_PAGES_PER_SECOND: '0' } });
  try {
    const { key } = await h.key(['user:get']);
    const signedIn = await connect(h);
    await signIn(h, signedIn.clientId, ALICE.oId);
    await signedIn.stream.next('login');
    const live = await connect(h);
    const baseline = await h.events();

    const visitors: string[] = [];
    for (let i = 0; i < 30; i++) visitors.push(await visitAndLeave(h, 2));
    const grown = await h.events();
    assert.is(grown.length - baseline.length, 30 * 2, 'each visit appended a connect and a disconnect; its login pages nothing');

    assert.is(await h.service.retention.runOnce(), 0, 'nothing is deleted before the retention (2 minutes by default) has passed');
    clock.advance(RETENTION_MS + 1000);
    await h.key(['user:get'], 'later'); // the newest event is not a visitor's: every visitor stream can go
    assert.is(await h.service.retention.runOnce(), 30, 'the ended clients; the completed sign-in waits for its state to expire');
    clock.advance(LOGIN_STATE_TTL_MS);
    assert.is(await h.service.retention.runOnce(), 1, 'then the sign-in attempt: a replay of its state is refused as expired from then on');

    const left = await streamsOf(h);
    for (const clientId of visitors) assert.not.ok(left.has(`client-${clientId}`), 'the ended anonymous client is gone');
    assert.not.ok(
      [...left].some((s) => s.startsWith('login-')),
      'the expired sign-in attempts are gone',
    );
    assert.ok(left.has(`client-${signedIn.clientId}`), 'a signed-in client stays');
    assert.ok(left.has(`client-${live.clientId}`), 'a connected client stays');
    const baselineWithoutLogins = baseline.filter((e) => !e.streamName.startsWith('login-')).length;
    const records = await h.events('retention');
    assert.equal(
      records.map((e) => (e.data as { streams: string[] }).streams.length),
      [30, 1],
      'each run that deleted recorded what it deleted, first',
    );
    assert.is(
      (await h.events()).length,
      baselineWithoutLogins + 1 + records.length,
      'the log is back to its size before the visits (plus the new key and the two records, less the sign-in attempt)',
    );

    // What depends on the client events answers as before, also after a rebuild of the read models.
    const answers = async () => [
      (await h.get(`/adm/user/get?client_id=${signedIn.clientId}`, key)).body?.data?.authenticated,
      (await h.get(`/adm/user/get?client_id=${live.clientId}`, key)).body?.data?.authenticated,
      (await h.get(`/adm/user/get?client_id=${visitors[0]}`, key)).status,
    ];
    assert.equal(await answers(), [true, false, 404]);
    assert.is((await visit(`${h.url}/fishpi/login?client_id=${visitors[0]}`)).status, 404, 'a deleted client cannot start a sign-in');
    const before = Math.max(...(await h.events()).map((e) => e.position));
    signedIn.stream.close();
    live.stream.close();
    await h.restart();
    const after = await h.events();
    assert.ok(
      after.every((e, i) => i === 0 || e.position > after[i - 1]!.position),
      'positions stay strictly increasing',
    );
    assert.ok(after.at(-1)!.position > before, 'new events come after every deleted one');
  } finally {
    await h.close();
  }
});

test('the stream holding the newest event goes at once: the record of its deletion comes first, so the head position never moves back', async () => {
  const h = await startHarness({ env: { ANONYMOUS_RETENTION_MS: '0' } });
  try {
    await h.service.retention.runOnce();
    const visitor = await visitAndLeave(h, 0);
    const head = await h.service.deps.store.headPosition();
    assert.is((await h.events()).at(-1)!.streamName, `client-${visitor}`, "the visitor's leaving is the newest event");
    assert.is(await h.service.retention.runOnce(), 1);
    assert.not.ok((await streamsOf(h)).has(`client-${visitor}`));
    const newest = (await h.events()).at(-1)!;
    assert.equal([newest.type, (newest.data as { streams: string[] }).streams], ['StreamsDeleted', [`client-${visitor}`]]);
    assert.ok((await h.service.deps.store.headPosition()) > head, 'the head moved on, never back');
  } finally {
    await h.close();
  }
});

test('a completed sign-in attempt is deleted once its state has expired and the retention passed; the session and the signed-in client stay', async () => {
  const clock = movableClock();
  const h = await startHarness({ clock, env: { ANONYMOUS_RETENTION_MS: '0' } });
  try {
    const { stream, clientId } = await connect(h);
    const cookie = await signIn(h, clientId, ALICE.oId);
    await stream.next('login');
    await h.key(['user:get']);
    assert.is(await h.service.retention.runOnce(), 0, 'its state has not expired yet');
    clock.advance(LOGIN_STATE_TTL_MS + 1000);
    assert.is(await h.service.retention.runOnce(), 1);
    const left = await streamsOf(h);
    assert.not.ok([...left].some((s) => s.startsWith('login-')));
    assert.ok([...left].some((s) => s.startsWith('session-')));
    const back = await connect(h, { cookie });
    assert.is(back.hello.data.login_status, true, 'the session still signs the user in');
    stream.close();
    back.stream.close();
  } finally {
    await h.close();
  }
});

test.run();
