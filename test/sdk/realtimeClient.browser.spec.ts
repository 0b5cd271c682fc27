// The SDK's browser client in headless Chromium, through the dev demo page (which is built on it):
// it connects, signs in through the popup and the platform's consent page, receives `login`, then
// a push made with the SDK's admin client arrives as a `message`; signing out reconnects the
// stream as a new client, and the next sign-in goes to that client.
import { createAdminClient } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumTest, consentAs, openBrowserWorld, openGame, openSignIn, shownClientId, STEP_MS, type Page } from '../support/browser.js';
import { ALICE, BOB } from '../support/harness.js';

const browserTest = chromiumTest('SDK browser client suite');

/** A frame the demo page shows: its event and its JSON data (`user` in a login frame). */
type ShownFrame = { event: string; data: { user?: { oId: string } } };

/** The frames the demo page shows, oldest first, as it received them. */
async function shownFrames(page: Page): Promise<ShownFrame[]> {
  const text = (await page.locator('#frames').textContent()) ?? '';
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const space = block.indexOf(' ');
      return { event: block.slice(0, space), data: JSON.parse(block.slice(space + 1)) as ShownFrame['data'] };
    })
    .reverse();
}

browserTest('connect, sign in through the popup, receive a push; sign out, and the next sign-in is for the new client', async () => {
  const world = await openBrowserWorld();
  try {
    const { h } = world;
    const { key } = await h.key(['message:push', 'user:get'], 'demo-game');
    const admin = createAdminClient({ baseUrl: h.url, apiKey: key });
    const game = await openGame(world, world.sameSiteGame);

    const popup = await openSignIn(game);
    await popup.waitForURL(`${h.simUrl}/openid/login?**`, { timeout: STEP_MS });
    await consentAs(popup, ALICE.oId);
    await game.page.locator('#status', { hasText: `signed in as ${ALICE.nickname}` }).waitFor({ timeout: STEP_MS });
    assert.is((await admin.user.get(game.clientId))?.data.authenticated, true);
    // The button closes its own window, and Playwright's click can fail with the page it closed:
    // what the test needs is the close (a click that failed for another reason is reported if
    // the page stays open).
    let clickError: unknown;
    await Promise.all([
      popup.waitForEvent('close', { timeout: STEP_MS }).catch((error: unknown) => {
        throw clickError ?? error;
      }),
      popup.click('#close', { noWaitAfter: true }).catch((error: unknown) => {
        clickError = error;
      }),
    ]);

    const pushed = await admin.message.push({ oIds: [ALICE.oId], name: 'reward', data: { coins: 5, note: 'for the SDK' } });
    assert.equal(pushed.data.online, [ALICE.oId]);
    await game.page.locator('#frames', { hasText: '"reward"' }).waitFor({ timeout: STEP_MS });
    const frames = await shownFrames(game.page);
    assert.equal(
      frames.map((f) => f.event),
      ['PB_CONNECT', 'login', 'message'],
    );
    assert.equal(frames[0]!.data, { client_id: game.clientId, login_status: false });
    assert.is(frames[1]!.data.user!.oId, ALICE.oId);
    assert.equal(frames[2]!.data, { app_id: 'demo-game', name: 'reward', data: { coins: 5, note: 'for the SDK' } });

    // Signing out ends the stream; the browser reconnects, and a new client says hello.
    await game.page.click('#signOut');
    const newClientId = await shownClientId(game.page);
    assert.is.not(newClientId, game.clientId);
    assert.is(await admin.user.get(game.clientId), null, 'the old client is gone');

    const second = await openSignIn(game);
    assert.is(new URL(game.responses.findLast((r) => r.url.includes('/fishpi/login?'))!.url).searchParams.get('client_id'), newClientId);
    await consentAs(second, BOB.oId);
    await game.page.locator('#status', { hasText: `signed in as ${BOB.nickname}` }).waitFor({ timeout: STEP_MS });
    const bob = await admin.user.get(newClientId);
    assert.ok(bob?.data.authenticated && bob.data.user.oId === BOB.oId, JSON.stringify(bob));
    assert.equal(world.violations, []);
    await game.context.close();
  } finally {
    await world.close();
  }
});

test.run();
