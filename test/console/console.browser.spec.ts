// The console in a real browser (Debian's Chromium through playwright-core): an operator signs in
// through the platform simulator's OpenID page, creates a key (which then works against /adm/;
// an incomplete form is refused before anything is sent), finds users, resolves an unknown
// outcome and filters the event log (the filter kept in the address); another account gets the
// 403 page; a phone reaches every page and long names do not widen it; every time says UTC; with
// the console off, /console says how to turn it on. No page may trip the console's policy. With
// CONSOLE_SCREENSHOTS=<dir>, each page is also saved there (the README's pictures).
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumTest, STEP_MS, type Browser, type Page } from '../support/browser.js';

type Locator = import('playwright-core').Locator;
import { ALICE, BOB, startHarness, withHarness, type Harness } from '../support/harness.js';
import { failAppendsOf } from '../support/appendFaults.js';
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

/** A page as wide as a phone, signed in as the operator. */
async function phone(width: number, path: string): Promise<Page> {
  const page = await open(width, 812);
  await page.context().addCookies(await operator.context().cookies());
  await page.goto(`${world.base}/console/${path}`);
  return page;
}

const pageWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');

/** Every date and time the page shows, in its text and its titles, says its zone; it shows some. */
async function assertTimesSayUtc(page: Page): Promise<void> {
  const text = await page.evaluate<string>(`[document.body.innerText, ...[...document.querySelectorAll('[title]')].map((e) => e.title)].join(' | ')`);
  assert.match(text, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, 'the page shows a time');
  assert.equal(text.match(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?! UTC)/g), null, 'every time says UTC');
}

/** The colour the element's text is drawn in. */
const colorOf = (element: Locator): Promise<string> =>
  element.evaluate((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(e).color);

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
  // No platform call has failed: the count reads like the text around it, not as a warning.
  const failed = operator.getByText('0 failed', { exact: true });
  assert.is(await colorOf(failed), await colorOf(failed.locator('..')));
  await assertTimesSayUtc(operator);
});

browserTest('an account that is no operator sees the 403 page after signing in', async () => {
  const page = await open();
  const refused = page.waitForResponse((r) => r.url().includes('/console/callback'), { timeout: STEP_MS });
  await signIn(page, BOB.oId);
  assert.is((await refused).status(), 403);
  await page.getByRole('heading', { name: 'Not a console operator' }).waitFor({ timeout: STEP_MS });
  await page.context().close();
});

browserTest('a key created in the console is shown once and works against /adm/; an incomplete form is refused before it is sent', async () => {
  const creations: string[] = [];
  operator.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/console/api/keys') creations.push(request.postData() ?? '');
  });
  await operator.goto(`${world.base}/console/#/keys`);
  await operator.getByRole('button', { name: 'Create key' }).click();
  await operator.getByText('App id: is required', { exact: false }).waitFor({ timeout: STEP_MS });
  await operator.getByText('Permissions: must name at least one permission').waitFor({ timeout: STEP_MS });
  assert.is(await operator.getByLabel('App id').getAttribute('aria-invalid'), 'true');
  assert.ok(
    await operator.getByLabel('App id').evaluate((e) => e === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement),
    'the first field with a problem has the focus',
  );
  await operator.getByLabel('App id').fill('browser-game');
  await operator.getByLabel('App name (a new app)').fill('Browser Game');
  await operator.locator('input[name="permission"][value="points:edit"]').check();
  await operator.locator('input[name="permission"][value="vip:read"]').check();
  await operator.getByRole('button', { name: 'Create key' }).click();
  const secret = (await operator.locator('#secret').textContent({ timeout: STEP_MS }))!;
  assert.match(secret, /^cbk_/);
  // Requests leave in order: the refused form's would have come before this one.
  assert.is(creations.length, 1, 'only the complete form was sent');
  assert.is(JSON.parse(creations[0]!).appId, 'browser-game');
  await operator.getByRole('cell', { name: /Browser Game/ }).waitFor({ timeout: STEP_MS });
  await assertTimesSayUtc(operator);
  await shot(operator, 'keys');
  const edit = await world.h.post('/adm/points/edit', { oId: BOB.oId, point: 5, memo: 'welcome' }, secret);
  assert.is(edit.status, 200, edit.text);
  assert.is((await world.h.get(`/adm/vip/${BOB.oId}`, secret)).status, 200);
  await operator.getByRole('button', { name: 'Done' }).click();
  assert.is(await operator.locator('#secret').count(), 0, 'the secret is not shown again');
});

browserTest('the users page lists the newest users before any search', async () => {
  await operator.goto(`${world.base}/console/#/users`);
  const newest = operator.getByRole('table', { name: 'Newest users' });
  await newest.getByRole('link', { name: BOB.userName, exact: true }).waitFor({ timeout: STEP_MS });
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
  await assertTimesSayUtc(operator);
  await shot(operator, 'user');
});

browserTest("an unknown outcome shows the caller's Idempotency-Key and request id, is found by either, and is resolved as applied, with a note", async () => {
  const { h } = world;
  const { key } = await h.key(['points:edit']);
  const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
  const sent = await h.request('POST', '/adm/points/edit', {
    body: { oId: BOB.oId, point: 7, memo: 'lost answer' },
    apiKey: key,
    headers: { 'Idempotency-Key': 'game-order-4711', 'X-Request-Id': 'trace-4711' },
  });
  undo();
  assert.is(sent.status, 504, sent.text);
  await h.restart(); // node-a closes out what it left pending: the outcome is now unknown
  await operator.goto(`${world.base}/console/#/unknown`);
  const operation = operator.getByRole('article').filter({ hasText: sent.body.data.operationId });
  await operation.getByText('node-a stopped before the platform answered').waitFor({ timeout: STEP_MS });
  await operation.locator('code', { hasText: /^game-order-4711$/ }).waitFor({ timeout: STEP_MS });
  await operation.locator('code', { hasText: /^trace-4711$/ }).waitFor({ timeout: STEP_MS });
  // What a developer quotes finds it; anything else finds nothing.
  for (const text of ['game-order-4711', 'trace-47']) {
    await operator.getByLabel('Find').fill(text);
    await operation.waitFor({ timeout: STEP_MS });
  }
  await operator.getByLabel('Find').fill('another-key');
  await operator.getByText('No unknown outcome matches “another-key”.').waitFor({ timeout: STEP_MS });
  assert.is(await operation.count(), 0);
  await operator.getByLabel('Find').fill('');
  await operation.waitFor({ timeout: STEP_MS });
  await assertTimesSayUtc(operator);
  await shot(operator, 'unknown');
  await operation.getByLabel('Applied', { exact: true }).check();
  await operation.getByLabel('Note').fill('the ledger shows +7');
  await operation.getByRole('button', { name: 'Resolve' }).click();
  await operator.getByText('No operation waits for a resolution.').waitFor({ timeout: STEP_MS });
  const resolved = (await h.events(`operation-${sent.body.data.operationId}`)).at(-1)!;
  assert.equal(resolved.data, { ...(resolved.data as object), applied: true, note: 'the ledger shows +7', by: { kind: 'operator', name: `console:${ALICE.oId}` } });
});

/** The streams of the events the event log shows. */
const shownStreams = (page: Page) => page.locator('.events code').evaluateAll((codes) => codes.map((code) => code.getAttribute('title')));

browserTest('the event log filters by category, keeps the filter in its address, and follows new events live', async () => {
  await operator.goto(`${world.base}/console/#/events`);
  await operator.getByLabel('Category').fill('apikey');
  await operator.getByRole('button', { name: 'Filter' }).click();
  await operator.getByText('ApiKeyIssued').first().waitFor({ timeout: STEP_MS });
  assert.is(new URL(operator.url()).hash, '#/events?category=apikey');
  await operator.reload();
  await operator.getByText('ApiKeyIssued').first().waitFor({ timeout: STEP_MS });
  assert.is(await operator.getByLabel('Category').inputValue(), 'apikey', 'the reloaded page shows its filter');
  const streams = await shownStreams(operator);
  assert.ok(streams.length > 0 && streams.every((stream) => stream?.startsWith('apikey-')), `only apikey streams after the reload: ${streams.join(', ')}`);
  await assertTimesSayUtc(operator);
  await shot(operator, 'events');
  await operator.getByRole('button', { name: 'Follow live' }).click();
  await operator.getByText(/Following from #\d+/).waitFor({ timeout: STEP_MS });
  const { id } = await world.h.key(['vip:read'], 'live-one');
  await operator.getByText(`apikey-${id}`).waitFor({ timeout: STEP_MS });
});

browserTest('on a phone every page is in reach: the Event log tab is on screen and opens the log', async () => {
  const page = await phone(375, '#/overview');
  await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: STEP_MS });
  const tab = await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Event log' }).boundingBox();
  assert.ok(tab && tab.x >= 0 && tab.x + tab.width <= 375 && tab.y >= 0 && tab.y + tab.height <= 812, `the tab is within the screen: ${JSON.stringify(tab)}`);
  // Where it is drawn, not where a scroll would bring it.
  await page.mouse.click(tab.x + tab.width / 2, tab.y + tab.height / 2);
  await page.getByRole('heading', { name: 'Event log' }).waitFor({ timeout: STEP_MS });
  assert.ok((await pageWidth(page)) <= 375, 'no sideways scrolling');
  await page.context().close();
});

browserTest('on a phone a long stream name is cut to the screen, the whole of it in its title', async () => {
  const { h } = world;
  // The longest app id, in one word: no hyphen to break the stream name at.
  const appId = `game${'0123456789'.repeat(6)}`;
  const { key } = await h.key(['points:edit'], appId);
  const edit = await h.request('POST', '/adm/points/edit', {
    body: { oId: BOB.oId, point: 1, memo: 'long name' },
    apiKey: key,
    headers: { 'Idempotency-Key': 'long-stream-name' },
  });
  assert.is(edit.status, 200, edit.text);
  const stream = (await h.events(`idempotency-${appId}-`))[0]!.streamName;
  const page = await phone(375, '#/events?category=idempotency');
  const name = page.locator(`code[title="${stream}"]`).first();
  await name.waitFor({ timeout: STEP_MS });
  assert.ok((await pageWidth(page)) <= 375, `the page is no wider than the screen (${await pageWidth(page)} px)`);
  const box = (await name.boundingBox())!;
  assert.ok(box.x + box.width <= 375, `the name ends on the screen: ${JSON.stringify(box)}`);
  await page.context().close();
});

browserTest('a failed platform call shows as a warning on the overview', async () => {
  const { h } = world;
  const { key } = await h.key(['vip:read'], 'failing-lookups');
  h.sim.failNext(1, 'http500');
  await h.get(`/adm/vip/${BOB.oId}`, key);
  await operator.goto(`${world.base}/console/#/overview`);
  const failed = operator.getByText(/^[1-9]\d* failed$/);
  await failed.waitFor({ timeout: STEP_MS });
  assert.is(await colorOf(failed), 'rgb(178, 94, 9)', 'drawn in the warning colour');
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

browserTest('with CONSOLE_ADMINS unset there is no console, and the page says how to turn it on', () =>
  withHarness({}, async (h) => {
    const page = await open();
    const response = await page.goto(`${h.url}/console/`);
    assert.is(response!.status(), 404);
    await page.getByRole('heading', { name: 'The operator console is off' }).waitFor({ timeout: STEP_MS });
    await page.getByText('CONSOLE_ADMINS', { exact: true }).first().waitFor({ timeout: STEP_MS });
    await page.context().close();
  }),
);

test.run();
