// Attack: open the console's reload stream (/console/assets/changes) anonymously, again and again,
// until the node runs out of file descriptors and its admin API and health check stop answering;
// and GET /console/assets/console.js over and over, each one bundling the front-end anew. The
// stream exists only with live reload on (`npm run dev`) and only for a signed-in operator, under
// caps per address and per node; the front-end is bundled once. Each node runs as a child process
// under `ulimit -n 200`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator } from '../../src/community/simulator.js';
import { CONSOLE_STREAM_LIMITS } from '../../src/console/streams.js';
import { requester, signInOperator } from '../console/operatorSignIn.js';
import { holdGet, startUnderLimit, type HeldRequest, type LimitedService } from '../console/serviceUnderLimit.js';
import { ALICE, BOB, defaultUsers } from '../support/harness.js';
import { issueKey } from '../support/serviceProcess.js';

const OPEN_FILES = 200;
/** More than the node has descriptors. */
const ATTEMPTS = 300;

interface World {
  service: LimitedService;
  apiKey: string;
}

async function withService(entry: 'start' | 'dev', env: Record<string, string>, run: (world: World) => Promise<void>): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-test-'));
  const sim = await createSimulator({ users: defaultUsers() }).listen();
  let service: LimitedService | undefined;
  try {
    const { key } = await issueKey(dataDir);
    service = await startUnderLimit({ entry, openFiles: OPEN_FILES, dataDir, communityUrl: sim.url, env: { CONSOLE_ADMINS: ALICE.oId, ...env } });
    await run({ service, apiKey: key });
  } finally {
    await service?.kill();
    await sim.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function holdMany(url: string, headers: (i: number) => Record<string, string>): Promise<HeldRequest[]> {
  const held: HeldRequest[] = [];
  for (let i = 0; i < ATTEMPTS; i++) held.push(await holdGet(url, headers(i)));
  return held;
}

function countOf(held: HeldRequest[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of held) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** With everything still held: an admin write and the health check answer. */
async function stillServes({ service, apiKey }: World): Promise<void> {
  const write = await fetch(`${service.url}/adm/vip/submit`, {
    method: 'POST',
    headers: { apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ oId: BOB.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }),
    signal: AbortSignal.timeout(10_000),
  });
  assert.is(write.status, 200, await write.text());
  const health = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
  assert.is(health.status, 200);
}

/** Anonymous GETs of the front-end's files: one bundle made for all of them. */
async function bundledOnce({ service }: World): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${service.url}/console/assets/${i % 4 === 0 ? 'console.css' : 'console.js'}`);
    assert.is(res.status, 200);
    await res.arrayBuffer();
  }
  const builds = service.logLines().filter((line) => line.msg === 'bundled the console front-end');
  assert.is(builds.length, 1, 'one bundle, whatever the requests');
}

test('run from the sources without live reload (npm start): there is no reload stream; 300 anonymous attempts leave admin writes and /healthz answering', () =>
  withService('start', {}, async (world) => {
    const held = await holdMany(`${world.service.url}/console/assets/changes`, () => ({}));
    try {
      await stillServes(world);
      assert.equal(countOf(held), { 404: ATTEMPTS });
      await bundledOnce(world);
    } finally {
      for (const request of held) request.close();
    }
  }));

test('with live reload (npm run dev): anonymous attempts are 401; an operator holds at most the per-address cap, every address together the per-node cap; admin writes and /healthz still answer', () =>
  withService('dev', { TRUST_PROXY: 'true' }, async (world) => {
    const changes = `${world.service.url}/console/assets/changes`;
    const anonymous = await holdMany(changes, () => ({}));
    const held: HeldRequest[] = [];
    try {
      await stillServes(world);
      assert.equal(countOf(anonymous), { 401: ATTEMPTS });
      const operator = await signInOperator({ url: world.service.url, request: requester(world.service.url) }, ALICE.oId);
      const { perAddress, perNode } = CONSOLE_STREAM_LIMITS;
      const fromOne = await holdMany(changes, () => ({ Cookie: operator.cookie, 'X-Forwarded-For': '198.51.100.1' }));
      held.push(...fromOne);
      assert.equal(countOf(fromOne), { 200: perAddress, 429: ATTEMPTS - perAddress });
      const fromMany = await holdMany(changes, (i) => ({ Cookie: operator.cookie, 'X-Forwarded-For': `203.0.${Math.floor(i / 250)}.${(i % 250) + 1}` }));
      held.push(...fromMany);
      assert.equal(countOf(fromMany), { 200: perNode - perAddress, 503: ATTEMPTS - (perNode - perAddress) });
      await stillServes(world);
      await bundledOnce(world);
    } finally {
      for (const request of [...anonymous, ...held]) request.close();
    }
  }));

test.run();
