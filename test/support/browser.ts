// The browser suites' world: Debian's Chromium driven by playwright-core, the dev demo page as
// the game's web client on an origin of its own, and a real service with the platform simulator.
// The demo page is served as localhost:G (same site as the service, localhost:P) and as
// 127.0.0.1:G (another site); the simulator is on a third site, as the platform is in production.
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import { createDemoServer } from '../../src/devDemo.js';
import { startHarness, type Harness } from './harness.js';
import { freePort } from './ports.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const STEP_MS = 15_000;

export type Browser = import('playwright-core').Browser;
export type BrowserContext = import('playwright-core').BrowserContext;
export type Page = import('playwright-core').Page;

/** uvu's `test` when Chromium is there, else `test.skip` after printing why. */
export function chromiumTest(suite: string): typeof test | typeof test.skip {
  if (existsSync(CHROMIUM)) return test;
  console.log(`skipped: ${suite} — no Chromium at ${CHROMIUM} (CI installs Debian's chromium; set CHROMIUM_PATH to use another)`);
  return test.skip;
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export interface BrowserWorld {
  h: Harness;
  browser: Browser;
  sameSiteGame: string;
  crossSiteGame: string;
  /** CSP violations any page reported. */
  violations: string[];
  close(): Promise<void>;
}

export async function openBrowserWorld(): Promise<BrowserWorld> {
  const { chromium } = await import('playwright-core');
  // A fixed port: the demo page names the service, and a restarted service comes back there.
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

/** A browser context whose CSP reports land in the world's violations. */
export async function newContext(world: BrowserWorld): Promise<BrowserContext> {
  const context = await world.browser.newContext();
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) world.violations.push(`${message.page()?.url()}: ${message.text()}`);
  });
  return context;
}

/** The demo page's client id while it shows "connected, not signed in (client …)". */
export async function shownClientId(page: Page): Promise<string> {
  await page.locator('#status', { hasText: 'connected, not signed in' }).waitFor({ timeout: STEP_MS });
  return /client (\S+)\)/.exec((await page.locator('#status').textContent())!)![1]!;
}

/** A fresh browser profile with the game page open and connected; every response recorded. */
export async function openGame(world: BrowserWorld, game: string) {
  const context = await newContext(world);
  const responses: Array<{ url: string; status: number }> = [];
  context.on('response', (response) => responses.push({ url: response.url(), status: response.status() }));
  const page = await context.newPage();
  await page.goto(`${game}/`);
  const clientId = await shownClientId(page);
  return { context, page, clientId, responses };
}

/** Clicks the game's sign-in button; the popup once it has loaded (the platform's consent page or our confirmation). */
export async function openSignIn(game: { context: BrowserContext; page: Page }): Promise<Page> {
  const [popup] = await Promise.all([game.context.waitForEvent('page', { timeout: STEP_MS }), game.page.click('#signIn')]);
  await popup.waitForLoadState('domcontentloaded', { timeout: STEP_MS });
  return popup;
}

/** On the platform's consent page: confirms as this user, then waits for our success page. */
export async function consentAs(popup: Page, oId: string): Promise<void> {
  await popup.locator(`button[value="${oId}"]`).click({ timeout: STEP_MS });
  await popup.locator('h1', { hasText: 'Signed in' }).waitFor({ timeout: STEP_MS });
}
