// The console's Webhooks page in a real browser (Debian's Chromium through playwright-core), with a
// real receiver on loopback: an operator picks the app's tab, adds an endpoint (its secret shown
// once), opens its attempts and sends an event again with the "Send again" button; an endpoint
// the service disabled for failing is announced on the page and on its own. Times say UTC and no
// page trips the console's policy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumTest, STEP_MS, type Browser, type Page } from '../support/browser.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, startHarness, type Harness } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

const browserTest = chromiumTest('console webhooks browser suite');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

interface World {
  h: Harness;
  base: string;
  browser: Browser;
  receiver: WebhookReceiver;
  failing: WebhookReceiver;
  violations: string[];
  streams: Array<{ close(): void }>;
}
let world: World;
let page: Page;

test.before(async () => {
  if (browserTest !== test) return;
  const port = await freePort();
  // A short retry period, so that an endpoint that always fails is disabled within the suite.
  const env = {
    PORT: String(port),
    PUBLIC_URL: `http://localhost:${port}`,
    CONSOLE_ADMINS: ALICE.oId,
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    WEBHOOKS_RETRY_FIRST_MS: '40',
    WEBHOOKS_RETRY_HOURS: '0.0005',
  };
  const h = await startHarness({ env });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
  world = { h, base: `http://localhost:${port}`, browser, receiver: await startWebhookReceiver(), failing: await startWebhookReceiver(), violations: [], streams: [] };
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) world.violations.push(message.text());
  });
  page = await context.newPage();
  await page.goto(`${world.base}/console/`);
  await page.getByRole('link', { name: 'Sign in with the community' }).click({ timeout: STEP_MS });
  await page.locator(`button[value="${ALICE.oId}"]`).click({ timeout: STEP_MS });
  await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: STEP_MS });
});

test.after(async () => {
  for (const stream of world?.streams ?? []) stream.close();
  await world?.browser.close();
  await world?.h.close();
  await world?.receiver.close();
  await world?.failing.close();
});

async function signedIn(oId: string): Promise<void> {
  const client = await connect(world.h);
  world.streams.push(client.stream);
  await signIn(world.h, client.clientId, oId);
}

browserTest("an operator adds an app's endpoint in its tab, sees the attempt and sends the event again", async () => {
  await world.h.key(['vip:read'], 'arcade');
  await world.h.key(['vip:read'], 'browser-game');
  await page.goto(`${world.base}/console/#/webhooks`);
  await page.getByRole('link', { name: /^browser-game/ }).click({ timeout: STEP_MS });
  await page.getByRole('heading', { name: 'New endpoint for browser-game' }).waitFor({ timeout: STEP_MS });
  await page.getByLabel('URL').fill(`${world.receiver.url}/hook`);
  await page.getByLabel('Description (optional)').fill('lobby');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = (await page.locator('#secret').textContent({ timeout: STEP_MS }))!;
  assert.match(secret, /^whsec_/);
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('link', { name: `${world.receiver.url}/hook` }).click({ timeout: STEP_MS });
  await page.getByRole('heading', { name: `${world.receiver.url}/hook` }).waitFor({ timeout: STEP_MS });

  await signedIn(BOB.oId);
  const eventId = (await eventually(() => world.receiver.arrivals[0], 'the sign-in at the receiver')).event.id;
  const row = page.getByRole('row', { name: new RegExp(eventId) });
  await row.getByText('delivered').waitFor({ timeout: STEP_MS });
  await row.getByRole('button', { name: 'Send again' }).click();
  await page.getByText(`${eventId} goes out again now.`).waitFor({ timeout: STEP_MS });
  await eventually(() => world.receiver.of(eventId).length === 2, 'the event sent again');
  await page
    .getByRole('row', { name: new RegExp(`${eventId}.*\\b2\\b`) })
    .first()
    .waitFor({ timeout: STEP_MS });
  const text = await page.evaluate<string>('document.body.innerText');
  assert.match(text, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
  assert.equal(text.match(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?! UTC)/g), null, 'every time says UTC');
});

browserTest('an endpoint disabled for failing is announced, on the Webhooks page and on its own', async () => {
  world.failing.otherwise({ status: 500, body: 'down' });
  const res = await world.h.post('/adm/webhooks', { url: world.failing.url, events: ['client.signed_in'] }, (await world.h.key(['webhooks:manage'], 'arcade')).key);
  assert.is(res.status, 200, res.text);
  const id = res.body.data.endpoint.id;
  await signedIn(ALICE.oId);
  await eventually(async () => (await world.h.get(`/adm/webhooks/${id}`, (await world.h.key(['webhooks:manage'], 'arcade')).key)).body.data.status === 'disabled', {
    what: 'the failing endpoint disabled',
    timeoutMs: 20_000,
  });
  await page.goto(`${world.base}/console/#/webhooks?app=arcade`);
  const notice = page.getByRole('alert').filter({ hasText: 'Disabled for failing' });
  await notice.waitFor({ timeout: STEP_MS });
  await notice.getByRole('link', { name: world.failing.url }).click();
  await page.getByRole('alert').filter({ hasText: 'because it kept failing' }).waitFor({ timeout: STEP_MS });
  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByRole('button', { name: 'Disable' }).waitFor({ timeout: STEP_MS });
  assert.equal(world.violations, [], 'no page tripped the content security policy');
});

test.run();
