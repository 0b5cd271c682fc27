// "A sign-in is not bound to the browser that started it", in a real browser (Debian's
// Chromium through playwright-core). The game page is the dev demo client, served on another
// origin, holding the stream with credentials and signing in through a popup:
// - same site as the service (localhost:G and localhost:P): the stream's Lax binding cookie is
//   stored, so the login page goes straight on to the platform;
// - another site (127.0.0.1:G): on plain http browsers refuse SameSite=None without Secure and
//   keep no Lax cookie from a cross-site stream, so the login page asks first, naming the
//   game's origin, and the sign-in completes once the user continues.
// The platform (the simulator) is on a third site, so its redirect to the callback is cross-site
// as in production, and the login cookie must survive it. No page may trip its own CSP.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumTest, consentAs, newContext, openBrowserWorld, openGame, openSignIn, STEP_MS } from '../support/browser.js';
import { ALICE, BOB, type Harness } from '../support/harness.js';

async function whoIs(h: Harness, clientId: string) {
  const { key } = await h.key(['user:get']);
  return (await h.get(`/adm/user/get?client_id=${clientId}`, key)).body.data;
}

const browserTest = chromiumTest('browser binding suite');

browserTest('same site: the browser holding the stream goes straight from the login page to the platform, and the game page gets the login', async () => {
  const s = await openBrowserWorld();
  try {
    const game = await openGame(s, s.sameSiteGame);
    const popup = await openSignIn(game);
    await popup.waitForURL(`${s.h.simUrl}/openid/login?**`, { timeout: STEP_MS });
    const loginPage = game.responses.find((r) => r.url.includes('/fishpi/login?'));
    assert.is(loginPage?.status, 302, 'no confirmation for the browser that holds the connection');
    await consentAs(popup, ALICE.oId);
    await game.page.locator('#status', { hasText: `signed in as ${ALICE.nickname}` }).waitFor({ timeout: STEP_MS });
    assert.is((await whoIs(s.h, game.clientId)).user.oId, ALICE.oId);
    assert.equal(s.violations, []);
    await game.context.close();
  } finally {
    await s.close();
  }
});

browserTest('another site: the login page names the game’s origin and goes on only when the user continues', async () => {
  const s = await openBrowserWorld();
  try {
    const game = await openGame(s, s.crossSiteGame);
    const popup = await openSignIn(game);
    await popup.locator('h1', { hasText: 'Confirm the sign-in' }).waitFor({ timeout: STEP_MS });
    assert.match((await popup.textContent('body'))!, `${s.crossSiteGame} asks to sign in with your community account`);
    assert.is((await whoIs(s.h, game.clientId)).authenticated, false, 'nothing happens before the user continues');
    await popup.click('#continue');
    await popup.waitForURL(`${s.h.simUrl}/openid/login?**`, { timeout: STEP_MS });
    await consentAs(popup, BOB.oId);
    await game.page.locator('#status', { hasText: `signed in as ${BOB.nickname}` }).waitFor({ timeout: STEP_MS });
    assert.is((await whoIs(s.h, game.clientId)).user.oId, BOB.oId);
    assert.equal(s.violations, []);
    await game.context.close();
  } finally {
    await s.close();
  }
});

browserTest('the attacker’s login link opened in the victim’s browser shows whose connection it is; closing it signs nobody in', async () => {
  const s = await openBrowserWorld();
  try {
    // The attacker's connection, from a script that says it is a page on evil.example.
    const attacker = await fetch(`${s.h.url}/api/realtime`, { headers: { Origin: 'https://evil.example' } });
    const reader = attacker.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const attackersClient = /"client_id":"([^"]+)"/.exec(first)![1]!;
    // The victim is playing the real game, same site, with the binding cookie in place.
    const victim = await openGame(s, s.sameSiteGame);
    const link = await victim.context.newPage();
    await link.goto(`${s.h.url}/fishpi/login?client_id=${attackersClient}`);
    await link.locator('h1', { hasText: 'Confirm the sign-in' }).waitFor({ timeout: STEP_MS });
    assert.match((await link.textContent('body'))!, 'https://evil.example asks to sign in');
    await link.close();
    assert.is((await whoIs(s.h, attackersClient)).authenticated, false);
    await reader.cancel();
    // Nor can the attacker's page frame the login page to have it clicked.
    const framed = await victim.context.newPage();
    const refused = framed.waitForEvent('console', { predicate: (message) => /frame-ancestors 'none'/.test(message.text()), timeout: STEP_MS });
    await framed.setContent(`<iframe src="${s.h.url}/fishpi/login?client_id=${victim.clientId}"></iframe>`);
    await refused;
    assert.match(framed.frames()[1]!.url(), /^chrome-error:/);
    await victim.context.close();
  } finally {
    await s.close();
  }
});

browserTest('/docs renders under its policy', async () => {
  const s = await openBrowserWorld();
  try {
    const context = await newContext(s);
    const page = await context.newPage();
    await page.goto(`${s.h.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: STEP_MS });
    // An operation opened, with "Try it out": the parts Swagger UI renders on demand.
    await page.locator('.opblock-summary').first().click({ timeout: STEP_MS });
    await page.locator('.try-out__btn').first().click({ timeout: STEP_MS });
    await page.locator('.execute').first().waitFor({ timeout: STEP_MS });
    assert.equal(s.violations, []);
    await context.close();
  } finally {
    await s.close();
  }
});

test.run();
