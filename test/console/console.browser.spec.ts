// The console in a real browser (Debian's Chromium through playwright-core): an operator signs in
// through the platform simulator's OpenID page, creates a key (which then works against /adm/),
// looks a user up, and resolves an unknown outcome; another account gets the 403 page; with the
// console off there is nothing at /console. No page may trip the console's policy. With
// CONSOLE_SCREENSHOTS=<dir>, each page is also saved there (the README's pictures).
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumTest, STEP_MS, type Browser, type Page } from '../support/browser.js';
import { ALICE, BOB, startHarness, withHarness, type Harness } from '../support/harness.js';
import { failAppendsOf } from '../support/storeFaults.js';
import { freePort } from '../support/ports.js';

const browserTest = chromiumTest('console browser suite');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = process.env.CONSOLE_SCREENSHOTS;

interface World {
  h: Harness;
  /** PUBLIC_URL: where the platform sends the browser back, so where the operator starts. */
  base: string;
  browser: Browser;
  violations: string[];
}

let world: World;

async function open(width = 1280, height = 860): Promise<Page> {
  const context = await world.browser.newContext({ viewport: { width, height } });
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) world.violations.push(message.text());
  });
  return context.newPage();
}

async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** From the console's sign-in button through the platform's consent page, as this account. */
async function signIn(page: Page, oId: string): Promise<void> {
  await page.goto(`${world.base}/console/`);
  await page.getByRole('link', { name: 'Sign in with the community' }).click({ timeout: STEP_MS });
  await page.locator(`button[value="${oId}"]`).click({ timeout: STEP_MS });
}

test.before(async () => {
  if (browserTest !== test) return;
  const port = await freePort();
  const h = await startHarness({ env: { PORT: String(port), PUBLIC_URL: `http://localhost:${port}`, CONSOLE_ADMINS: ALICE.oId, NODE_ID: 'node-a' } });
  const { chromium } = await import('playwright-core');
  // The service as localhost, the platform simulator on 127.0.0.1: another site, as in production.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
  world = { h, base: `http://localhost:${port}`, browser, violations: [] };
});

test.after(async () => {
  await world?.browser.close();
  await world?.h.close();
});

let operator: Page;

browserTest('an operator signs in through the platform and lands on the overview', async () => {
  operator = await open();
  await signIn(operator, ALICE.oId);
  await operator.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: STEP_MS });
  assert.is(new URL(operator.url()).pathname, '/console/');
  await operator.getByText(`${ALICE.nickname}`, { exact: true }).waitFor({ timeout: STEP_MS });
});

browserTest('an account that is no operator sees the 403 page after signing in', async () => {
  const page = await open();
  const refused = page.waitForResponse((r) => r.url().includes('/console/callback'), { timeout: STEP_MS });
  await signIn(page, BOB.oId);
  assert.is((await refused).status(), 403);
  await page.getByRole('heading', { name: 'Not a console operator' }).waitFor({ timeout: STEP_MS });
  await page.context().close();
});

browserTest('a key created in the console is shown once and works against /adm/', async () => {
  await operator.goto(`${world.base}/console/#/keys`);
  await operator.getByLabel('App id').fill('browser-game');
  await operator.getByLabel('App name (a new app)').fill('Browser Game');
  await operator.locator('input[name="permission"][value="points:edit"]').check();
  await operator.locator('input[name="permission"][value="vip:read"]').check();
  await operator.getByRole('button', { name: 'Create key' }).click();
  const secret = (await operator.locator('#secret').textContent({ timeout: STEP_MS }))!;
  assert.match(secret, /^cbk_/);
  await operator.getByRole('cell', { name: /Browser Game/ }).waitFor({ timeout: STEP_MS });
  await shot(operator, 'keys');
  const edit = await world.h.post('/adm/points/edit', { oId: BOB.oId, point: 5, memo: 'welcome' }, secret);
  assert.is(edit.status, 200, edit.text);
  assert.is((await world.h.get(`/adm/vip/${BOB.oId}`, secret)).status, 200);
  await operator.getByRole('button', { name: 'Done' }).click();
  assert.is(await operator.locator('#secret').count(), 0, 'the secret is not shown again');
});

browserTest('a user is found by name, and their page shows the points edit with its outcome', async () => {
  await operator.goto(`${world.base}/console/#/users`);
  await operator.getByLabel('Search users').fill('bo');
  await operator.getByRole('button', { name: 'Search' }).click();
  await operator.getByRole('link', { name: BOB.userName, exact: true }).click({ timeout: STEP_MS });
  await operator.getByRole('heading', { name: BOB.nickname }).waitFor({ timeout: STEP_MS });
  const audit = operator.getByRole('table', { name: 'Operations' });
  await audit.getByText('point: 5 · memo: welcome').waitFor({ timeout: STEP_MS });
  assert.match((await audit.textContent())!, /applied/);
  await shot(operator, 'user');
});

browserTest('an unknown outcome is resolved as applied, with a note', async () => {
  const { h } = world;
  const { key } = await h.key(['points:edit']);
  const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
  const sent = await h.request('POST', '/adm/points/edit', { body: { oId: BOB.oId, point: 7, memo: 'lost answer' }, apiKey: key });
  undo();
  assert.is(sent.status, 504, sent.text);
  await h.restart(); // node-a closes out what it left pending: the outcome is now unknown
  await operator.goto(`${world.base}/console/#/unknown`);
  const operation = operator.getByRole('article').filter({ hasText: sent.body.data.operationId });
  await operation.getByText('node-a stopped before the platform answered').waitFor({ timeout: STEP_MS });
  await shot(operator, 'unknown');
  await operation.getByLabel('Applied', { exact: true }).check();
  await operation.getByLabel('Note').fill('the ledger shows +7');
  await operation.getByRole('button', { name: 'Resolve' }).click();
  await operator.getByText('No operation waits for a resolution.').waitFor({ timeout: STEP_MS });
  const resolved = (await h.events(`operation-${sent.body.data.operationId}`)).at(-1)!;
  assert.equal(resolved.data, { ...(resolved.data as object), applied: true, note: 'the ledger shows +7', by: { kind: 'operator', name: `console:${ALICE.oId}` } });
});

browserTest('the event log filters by category and follows new events live', async () => {
  await operator.goto(`${world.base}/console/#/events`);
  await operator.getByLabel('Category').fill('apikey');
  await operator.getByRole('button', { name: 'Filter' }).click();
  await operator.getByText('ApiKeyIssued').first().waitFor({ timeout: STEP_MS });
  await shot(operator, 'events');
  await operator.getByRole('button', { name: 'Follow live' }).click();
  await operator.getByText(/Following from #\d+/).waitFor({ timeout: STEP_MS });
  const { id } = await world.h.key(['vip:read'], 'live-one');
  await operator.getByText(`apikey-${id}`).waitFor({ timeout: STEP_MS });
});

browserTest('on a phone the overview reads in one column; no page tripped the policy', async () => {
  const phone = await open(390, 844);
  await phone.context().addCookies(await operator.context().cookies());
  await phone.goto(`${world.base}/console/#/overview`);
  await phone.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: STEP_MS });
  const width = await phone.evaluate<number>('document.documentElement.scrollWidth');
  assert.ok(width <= 390, `no sideways scrolling (${width} px)`);
  await shot(phone, 'overview-phone');
  // The desktop picture last too, once the suite has given the overview something to show.
  await operator.goto(`${world.base}/console/#/overview`);
  await operator.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: STEP_MS });
  await shot(operator, 'overview');
  assert.equal(world.violations, []);
});

browserTest('with CONSOLE_ADMINS unset there is no console', () =>
  withHarness({}, async (h) => {
    const page = await open();
    const response = await page.goto(`${h.url}/console/`);
    assert.is(response!.status(), 404);
    await page.context().close();
  }));

test.run();
