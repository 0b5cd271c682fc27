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
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createDemoServer } from '../../src/devDemo.js';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const STEP_MS = 15_000;

type Browser = import('playwright-core').Browser;
type Page = import('playwright-core').Page;

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  const port = await listening(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

interface Setup {
  h: Harness;
  browser: Browser;
  sameSiteGame: string;
  crossSiteGame: string;
  /** CSP violations any page reported. */
  violations: string[];
  close(): Promise<void>;
}

async function setUp(): Promise<Setup> {
  const { chromium } = await import('playwright-core');
  const port = await freePort();
  const serviceUrl = `http://localhost:${port}`;
  const demo = createDemoServer({ serviceUrl, communityName: 'fishpi' });
  const gamePort = await listening(demo);
  const sameSiteGame = `http://localhost:${gamePort}`;
  const crossSiteGame = `http://127.0.0.1:${gamePort}`;
  const h = await startHarness({ env: { PORT: String(port), PUBLIC_URL: serviceUrl, CORS_ORIGINS: `${sameSiteGame},${crossSiteGame}` } });
  // `localhost` goes to the IPv4 loopback the service and the game page listen on.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, '--host-resolver-rules=MAP localhost 127.0.0.1'] });
  return {
    h,
    browser,
    sameSiteGame,
    crossSiteGame,
    violations: [],
    async close() {
      await browser.close();
      await h.close();
      demo.closeAllConnections();
      await new Promise((resolve) => demo.close(resolve));
    },
  };
}

/** A fresh browser profile with the game page open and connected; every response and CSP report recorded. */
async function openGame(s: Setup, game: string) {
  const context = await s.browser.newContext();
  const responses: Array<{ url: string; status: number }> = [];
  context.on('response', (response) => responses.push({ url: response.url(), status: response.status() }));
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) s.violations.push(`${message.page()?.url()}: ${message.text()}`);
  });
  const page = await context.newPage();
  await page.goto(`${game}/`);
  await page.locator('#status', { hasText: 'connected, not signed in' }).waitFor({ timeout: STEP_MS });
  const clientId = /client (\S+)\)/.exec((await page.locator('#status').textContent())!)![1]!;
  return { context, page, clientId, responses };
}

/** Clicks the game's sign-in button; answers the popup once it shows the platform's consent page or our confirmation. */
async function openSignIn(game: Awaited<ReturnType<typeof openGame>>): Promise<Page> {
  const [popup] = await Promise.all([game.context.waitForEvent('page', { timeout: STEP_MS }), game.page.click('#signIn')]);
  await popup.waitForLoadState('domcontentloaded', { timeout: STEP_MS });
  return popup;
}

/** On the platform's consent page: confirms as this user, then waits for our success page. */
async function consentAs(popup: Page, oId: string): Promise<void> {
  await popup.locator(`button[value="${oId}"]`).click({ timeout: STEP_MS });
  await popup.locator('h1', { hasText: 'Signed in' }).waitFor({ timeout: STEP_MS });
}

async function whoIs(h: Harness, clientId: string) {
  const { key } = await h.key(['user:get']);
  return (await h.get(`/adm/user/get?client_id=${clientId}`, key)).body.data;
}

const chromiumFound = existsSync(CHROMIUM);
if (!chromiumFound) {
  console.log(`skipped: browser binding suite — no Chromium at ${CHROMIUM} (CI installs Debian's chromium; set CHROMIUM_PATH to use another)`);
}
const browserTest = chromiumFound ? test : test.skip;

browserTest('same site: the browser holding the stream goes straight from the login page to the platform, and the game page gets the login', async () => {
  const s = await setUp();
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
  const s = await setUp();
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
  const s = await setUp();
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
  const s = await setUp();
  try {
    const context = await s.browser.newContext();
    const violations: string[] = [];
    context.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const page = await context.newPage();
    await page.goto(`${s.h.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: STEP_MS });
    // An operation opened, with "Try it out": the parts Swagger UI renders on demand.
    await page.locator('.opblock-summary').first().click({ timeout: STEP_MS });
    await page.locator('.try-out__btn').first().click({ timeout: STEP_MS });
    await page.locator('.execute').first().waitFor({ timeout: STEP_MS });
    assert.equal(violations, []);
    await context.close();
  } finally {
    await s.close();
  }
});

test.run();
