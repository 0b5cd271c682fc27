// The console's nodes, from their heartbeats, in a real browser: two service processes on one
// SQLite file, the operator signed in on the first. Both show live; the second is killed (SIGKILL)
// and, while the page refreshes by itself, shows "lapsed" since its last heartbeat, before its
// lease is out ("gone"); the node serving the page says it is the one. The Online page lists a
// player signed in on the second node, and no longer once its lease is out.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator } from '../../src/community/simulator.js';
import { chromiumTest, STEP_MS, type Browser } from '../support/browser.js';
import { ALICE, BOB, defaultUsers } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { killServiceProcesses, startServiceProcess, type ServiceProcess } from '../support/serviceProcess.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HEARTBEAT_MS = 1000;
/** A node's lease: 7.5 heartbeats without a beat, then it is gone (README, NODE_HEARTBEAT_MS). */
const LEASE_MS = HEARTBEAT_MS * 7.5;

interface World {
  dir: string;
  closePlatform: () => Promise<void>;
  nodes: ServiceProcess[];
  browser: Browser;
  base: string;
}

const browserTest = chromiumTest('console nodes browser suite');
const test = suite<World>('console nodes from heartbeats');

test.before(async (world) => {
  if (browserTest === test.skip) return;
  world.dir = await mkdtemp(join(tmpdir(), 'community-bridge-console-nodes-'));
  const platform = await createSimulator({ users: defaultUsers() }).listen();
  world.closePlatform = platform.close;
  const port = await freePort();
  world.base = `http://localhost:${port}`;
  const env = { CONSOLE_ADMINS: ALICE.oId, PUBLIC_URL: world.base, NODE_HEARTBEAT_MS: String(HEARTBEAT_MS), SESSION_SECRET: 'nodes-browser-secret-0123456789abcdef' };
  world.nodes = [
    await startServiceProcess({ dataDir: world.dir, communityUrl: platform.url, nodeId: 'node-one', env: { ...env, PORT: String(port) } }),
    await startServiceProcess({ dataDir: world.dir, communityUrl: platform.url, nodeId: 'node-two', env }),
  ];
  const { chromium } = await import('playwright-core');
  world.browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
});

test.after(async (world) => {
  await world.browser?.close();
  await killServiceProcesses();
  await world.closePlatform?.();
  if (world.dir) await rm(world.dir, { recursive: true, force: true });
});

const run = browserTest === test.skip ? test.skip : test;

run('a killed node turns lapsed since its last heartbeat, before it is gone; the serving node says it is the one', async (world) => {
  const page = await (await world.browser.newContext()).newPage();
  await page.goto(`${world.base}/console/`);
  await page.getByRole('link', { name: 'Sign in with the community' }).click({ timeout: STEP_MS });
  await page.locator(`button[value="${ALICE.oId}"]`).click({ timeout: STEP_MS });
  await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: STEP_MS });

  const row = (node: string) => page.getByRole('table', { name: 'Nodes' }).getByRole('row').filter({ hasText: node });
  await row('node-one').getByText('(this one)').waitFor({ timeout: STEP_MS });
  await row('node-one').getByText('live', { exact: true }).waitFor({ timeout: STEP_MS });
  await row('node-two').getByText('live', { exact: true }).waitFor({ timeout: STEP_MS });
  assert.match((await page.getByText('served by node').textContent()) ?? '', /served by node node-one/);

  // A player (bob) signed in to a realtime client that node-two holds.
  const player = await connect(world.nodes[1]!);
  await signIn(world.nodes[1]!, player.clientId, BOB.oId);
  const online = await (await world.browser.newContext({ storageState: await page.context().storageState() })).newPage();
  await online.goto(`${world.base}/console/#/online`);
  const bob = online.getByRole('table', { name: 'Users online' }).getByRole('row').filter({ hasText: BOB.oId });
  await bob.getByText('node-two').waitFor({ timeout: STEP_MS });

  await world.nodes[1]!.kill();
  // The page refreshes every few seconds by itself: node-two shows lapsed while its lease runs.
  await row('node-two').getByText('lapsed: no heartbeat').waitFor({ timeout: LEASE_MS });
  await row('node-one').getByText('live', { exact: true }).waitFor({ timeout: STEP_MS });
  // Once the lease is out, bob is offline: the Online page (refreshing by itself) drops him.
  await bob.waitFor({ state: 'detached', timeout: LEASE_MS + STEP_MS });
  await online.getByText('Nobody is signed in to a realtime client right now.').waitFor({ timeout: STEP_MS });
  player.stream.close();
});

test.run();
