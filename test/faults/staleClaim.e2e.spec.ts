// A request that stalls past the claim window (SIGSTOP) and loses its Idempotency-Key claim to a
// retry on another node writes nothing when it resumes: three service processes on one store, and
// a newer submit acknowledged in between stays the record.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE } from '../support/harness.js';
import type { Answer, ServiceProcess } from '../support/serviceProcess.js';
import { assertReplayed, openWorld, pastClaimWindow, stopOutsideStoreWrite, type World } from './world.js';

const LOOKUP_PATH = '/api/user/getInfoById';
/** How long the stalled request's user lookup is held by the platform: past the claim window. */
const LOOKUP_HOLD_MS = 2500;

const staleClaim = suite<{ world: World; nodes: ServiceProcess[] }>('a request that lost its claim writes nothing');

staleClaim.before(async (context) => {
  // The stalled request's platform call must not time out while it is stopped.
  context.world = await openWorld({ NODE_HEARTBEAT_MS: '200', COMMUNITY_TIMEOUT_MS: '15000' });
  context.nodes = [];
  // One after another: each measures its clock against the ones already running.
  for (const nodeId of ['stale-a', 'stale-b', 'stale-c']) context.nodes.push(await context.world.start(nodeId));
});
staleClaim.after(async ({ world, nodes }) => {
  for (const node of nodes ?? []) process.kill(node.pid, 'SIGCONT');
  await world?.close();
});

const submit = (node: ServiceProcess, world: World, idempotencyKey: string, expired: string): Promise<Answer> =>
  node.request('POST', '/adm/vip/submit', { body: { oId: ALICE.oId, quality: 'vip', expired }, apiKey: world.key, idempotencyKey });

/** The VIP expiries recorded for alice, oldest first, from the log itself. */
function recordedExpiries(world: World): string[] {
  const userId = world.log.ofType('UserRegistered').find((e) => e.data.oId === ALICE.oId)?.data.userId;
  return [...world.log.ofType('VipGranted'), ...world.log.ofType('VipRenewed')]
    .filter((e) => e.data.userId === userId && e.data.quality === 'vip')
    .sort((a, b) => a.position - b.position)
    .map((e) => e.data.expired);
}

staleClaim('a VIP submit stalled past the claim window answers 409 and does not undo a newer acknowledged submit', async ({ world, nodes }) => {
  const [a, b, c] = nodes as [ServiceProcess, ServiceProcess, ServiceProcess];
  const started = world.log.ofType('IdempotentRequestStarted').length;
  world.sim.faultNext(LOOKUP_PATH, { kind: 'delayThenApply', ms: LOOKUP_HOLD_MS });
  const stalled = submit(a, world, 'vip-stalled', '2030-01-01 00:00:00');
  // A holds the claim and waits for the platform: stop it there.
  await eventually(() => world.log.ofType('IdempotentRequestStarted').length > started, { what: 'node a claims the key' });
  const lookup = await eventually(
    () => {
      const index = world.sim.arrivals(LOOKUP_PATH).findIndex((arrival) => !arrival.answered);
      return index >= 0 ? { index } : undefined;
    },
    { what: "node a's user lookup to reach the platform" },
  );
  await stopOutsideStoreWrite(a.pid, world.dataDir);
  await pastClaimWindow();

  const retry = await submit(b, world, 'vip-stalled', '2030-01-01 00:00:00');
  assert.is(retry.status, 200, `the retry on node b: ${retry.text}`);
  const newer = await submit(c, world, 'vip-newer', '2031-06-01 00:00:00');
  assert.is(newer.status, 200, `the newer submit on node c: ${newer.text}`);
  assert.equal(recordedExpiries(world).slice(-2), ['2030-01-01T00:00:00.000Z', '2031-06-01T00:00:00.000Z']);

  // The platform answers A's lookup meanwhile; A resumes with a claim it no longer holds.
  await eventually(() => world.sim.arrivals(LOOKUP_PATH)[lookup.index]!.answered, { what: "the platform to answer node a's lookup" });
  const positionBefore = world.log.after(0).at(-1)!.position;
  process.kill(a.pid, 'SIGCONT');
  const answer = await stalled;
  assert.is(answer.status, 409, `the stalled request: ${answer.text}`);
  assert.match(answer.body.message, /lost its claim/);
  assert.match(answer.body.message, /nothing was written/);

  // Nothing of A's request is in the log, and the newer submit is still the record.
  const written = world.log.after(positionBefore).filter((e) => e.type.startsWith('Vip') || e.stream.startsWith('idempotency-'));
  assert.equal(written, [], `written after the stalled request resumed: ${JSON.stringify(written)}`);
  assert.equal(recordedExpiries(world).at(-1), '2031-06-01T00:00:00.000Z');
  const listed = await b.request('GET', `/adm/vip/${ALICE.oId}`, { apiKey: world.key });
  assert.is(listed.body.data.find((r: { quality: string }) => r.quality === 'vip')?.expired, '2031-06-01 00:00:00.000Z');

  // The key answers what the retry answered, on every node.
  const again = await submit(a, world, 'vip-stalled', '2030-01-01 00:00:00');
  assertReplayed(again);
  assert.equal(again.body, retry.body);
});

staleClaim.run();
