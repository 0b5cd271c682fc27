// No node waits on another, on PostgreSQL: node A reaches the database through a TCP proxy of the
// test's own, node B directly. A is frozen (SIGSTOP) or cut off (its connections black-holed) the
// instant its append is on its way to the server, after any lock the append takes; B's keyed
// writes are acknowledged while A stays frozen or cut off and its database sessions still live
// (a lock held by A's session would have stopped B until the server ended that session). Then A is
// let go, and every write is in the log once. Last, every attempt of one key gets one final
// answer when the first attempt's append is held past its claim's staleness.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator, type SimulatorState } from '../../src/community/simulator.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, defaultUsers } from '../support/harness.js';
import { postgresBinaries, startCluster, type PostgresCluster } from '../support/postgres.js';
import { cliJson, killServiceProcesses, runToEnd, startServiceProcess, type Answer, type ServiceProcess } from '../support/serviceProcess.js';
import { type ProxiedConnection, startTcpProxy, type TcpProxy } from '../support/tcpProxy.js';

/** What an append sends once it holds (or is about to take) the append lock: its statement. */
const APPEND = /append_batch|pg_advisory_xact_lock/;

interface World {
  cluster: PostgresCluster;
  dataDir: string;
  simUrl: string;
  sim: SimulatorState;
  closeSim: () => Promise<void>;
  key: string;
}

const test = suite<{ world?: World }>('PostgreSQL: a node frozen or cut off mid-append delays no other node');
const binaries = postgresBinaries();

async function openWorld(): Promise<World> {
  const cluster = await startCluster();
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-pg-faults-'));
  const simulator = createSimulator({ users: defaultUsers() });
  const running = await simulator.listen();
  const issued = await runToEnd(['keys', 'create', '--app-id', 'game', '--permissions', '*', '--json'], {
    EVENTSTORE_CONNECTION_STRING: cluster.connectionString,
    DATA_DIR: dataDir,
  });
  const { key } = cliJson<{ key: string }>(issued);
  return { cluster, dataDir, simUrl: running.url, sim: simulator.state, closeSim: () => running.close(), key };
}

const start = (world: World, nodeId: string, connectionString: string) =>
  startServiceProcess({
    dataDir: world.dataDir,
    communityUrl: world.simUrl,
    nodeId,
    env: { EVENTSTORE_CONNECTION_STRING: connectionString, NODE_HEARTBEAT_MS: '200', IDEMPOTENCY_CLAIM_STALE_MS: String(STALE_MS) },
  });

/** Claims go stale quickly here, so that an append can be held past it. */
const STALE_MS = 1500;

/** A's connection string through the proxy. */
const through = (world: World, proxy: TcpProxy) => world.cluster.connectionString.replace(`:${world.cluster.port}/`, `:${proxy.port}/`);

const grant = (node: ServiceProcess, world: World, oId: string, expired: string, idempotencyKey: string): Promise<Answer> =>
  node.request('POST', '/adm/vip/submit', { body: { oId, quality: 'vip', expired }, apiKey: world.key, idempotencyKey });

/** The server's sessions that came through the proxy (A's), by backend pid. */
async function sessionsOf(world: World, proxy: TcpProxy): Promise<number[]> {
  const rows = await world.cluster.sql<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[]) ORDER BY pid', [proxy.upstreamPorts()]);
  return rows.map((row) => row.pid);
}

/** VIP records of this expiry in the log (granted or renewed), by counting the events themselves. */
async function grantsOf(world: World, expired: string): Promise<number> {
  const rows = await world.cluster.sql<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE type IN ('VipGranted', 'VipRenewed') AND data->>'expired' LIKE $1", [
    `${expired}%`,
  ]);
  return rows[0]!.n;
}

/**
 * B's writes while A is held: each acknowledged while every session A had when it was held still
 * lives (B did not wait for the server to end one that held a lock), and no lock is held.
 */
async function bWritesWhileAIsHeld(world: World, b: ServiceProcess, proxy: TcpProxy, tag: string): Promise<void> {
  const aSessions = await sessionsOf(world, proxy);
  assert.ok(aSessions.length > 0, "A's sessions are seen through the proxy");
  for (let i = 0; i < 3; i++) {
    const answer = await grant(b, world, BOB.oId, `${tag === 'frozen' ? 2031 : 2033}-0${i + 1}-01 00:00:00`, `${tag}-b-${i}`);
    assert.is(answer.status, 200, `B's write ${i}: ${answer.text}`);
  }
  const still = await sessionsOf(world, proxy);
  assert.ok(
    aSessions.every((pid) => still.includes(pid)),
    `every session A had when it was held still lives (${aSessions.join(', ')} then, ${still.join(', ')} now): B did not wait for the server to end one`,
  );
  const locks = await world.cluster.sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted");
  assert.is(locks[0]!.n, 0, 'no advisory lock is held while A is held');
}

if ('missing' in binaries) {
  console.log(`skipped: PostgreSQL fault suite — ${binaries.missing}`);
  test.skip('PostgreSQL binaries are missing');
} else {
  test.before(async (context) => {
    context.world = await openWorld();
  });
  test.after(async ({ world }) => {
    await killServiceProcesses();
    if (!world) return;
    await world.closeSim();
    await world.cluster.destroy();
    await rm(world.dataDir, { recursive: true, force: true });
  });

  test('A frozen by SIGSTOP with its append on its way: B writes on; A, let go, answers, and each write is in the log once', async ({ world }) => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: world!.cluster.port });
    try {
      const [a, b] = await Promise.all([start(world!, 'frozen-a', through(world!, proxy)), start(world!, 'frozen-b', world!.cluster.connectionString)]);
      let frozen = false;
      proxy.onNext(APPEND, () => {
        process.kill(a.pid, 'SIGSTOP');
        frozen = true;
      });
      const aWrite = grant(a, world!, ALICE.oId, '2030-01-01 00:00:00', 'frozen-a-1');
      await eventually(() => frozen, { what: "A's append to pass the proxy" });
      try {
        await bWritesWhileAIsHeld(world!, b, proxy, 'frozen');
      } finally {
        process.kill(a.pid, 'SIGCONT');
      }
      const answer = await aWrite;
      assert.is(answer.status, 200, `A, resumed, answers its write: ${answer.text}`);
      assert.is(await grantsOf(world!, '2030-01-01'), 1, "A's grant is in the log once");
      for (let i = 0; i < 3; i++) assert.is(await grantsOf(world!, `2031-0${i + 1}-01`), 1, `B's grant ${i} is in the log once`);
    } finally {
      await proxy.close();
    }
  });

  test('A cut off (its connections black-holed) with its append on its way: B writes on; A notices within its bounds, answers 503, and recovers without a restart', async ({
    world,
  }) => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: world!.cluster.port });
    try {
      const [a, b] = await Promise.all([start(world!, 'cut-a', through(world!, proxy)), start(world!, 'cut-b', world!.cluster.connectionString)]);
      let cut = false;
      proxy.onNext(APPEND, () => {
        proxy.blackHole();
        cut = true;
      });
      const aWrite = grant(a, world!, ALICE.oId, '2032-01-01 00:00:00', 'cut-a-1');
      await eventually(() => cut, { what: "A's append to pass the proxy" });
      await bWritesWhileAIsHeld(world!, b, proxy, 'cut');

      // A finds out by itself: its pending write fails as the store's trouble (never hangs), and
      // it leaves the load balancer.
      const answer = await aWrite;
      assert.is(answer.status, 503, `A's write while cut off: ${answer.text}`);
      assert.is(answer.body.data.reason, 'store_unavailable');
      assert.ok(answer.headers.get('retry-after'), 'with Retry-After');
      await eventually(async () => (await a.request('GET', '/readyz')).status === 503, { what: "A's /readyz to say 503 while it is cut off", timeoutMs: 20_000 });

      proxy.restore();
      await eventually(async () => (await a.request('GET', '/readyz')).status === 200, {
        what: "A's /readyz to say 200 once the network is back",
        timeoutMs: 30_000,
        everyMs: 250,
      });
      // The retry finds what the cut-off append did: the grant once, whichever way it went.
      const retry = await grant(a, world!, ALICE.oId, '2032-01-01 00:00:00', 'cut-a-1');
      assert.is(retry.status, 200, retry.text);
      assert.is(await grantsOf(world!, '2032-01-01'), 1, "A's grant is in the log once");
      const output = a.output();
      assert.not.match(output, /"level":50[^\n]*store|internal_error/, 'no error-level line for the store trouble');
      assert.match(output, /the event store is unavailable/, 'the outage is logged (once, at warn)');
      assert.is(output.match(/the event store is unavailable/g)!.length, 1, 'once per outage');
    } finally {
      proxy.restore();
      await proxy.close();
    }
  });

  test("one key, one final answer: the first attempt's outcome append held past its claim's staleness, a retry on another node waits (409 claim_in_progress), never says unknown of a write that then succeeds", async ({
    world,
  }) => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: world!.cluster.port });
    try {
      const [a, b] = await Promise.all([start(world!, 'slow-a', through(world!, proxy)), start(world!, 'slow-b', world!.cluster.connectionString)]);
      const memo = 'held past staleness';
      const edit = (node: ServiceProcess) => node.request('POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 1, memo }, apiKey: world!.key, idempotencyKey: 'slow-1' });
      // The platform applied it; the append that records so is held on its way (A's other
      // connections, its heartbeats among them, go on).
      let held: ProxiedConnection | undefined;
      proxy.onNext(
        /OperationApplied/,
        (connection) => {
          connection.hold();
          held = connection;
        },
        { before: true },
      );
      const first = edit(a);
      await eventually(() => held !== undefined, { what: "A's outcome append to be on its way" });
      await new Promise((resolve) => setTimeout(resolve, STALE_MS + 500));
      const retries: Answer[] = [];
      try {
        retries.push(await edit(b));
      } finally {
        held!.release();
      }
      const answers = [await first, ...retries, await edit(b), await edit(a)];
      assert.equal(
        answers.map((answer) => (answer.status === 200 ? 200 : `${answer.status} ${answer.body?.data?.reason}`)),
        [200, '409 claim_in_progress', 200, 200],
        answers.map((answer) => answer.text).join('\n'),
      );
      assert.is(world!.sim.pointsApplied(memo), 1, 'applied once on the platform');
      const listed = await runToEnd(['operations', 'list', '--json'], { EVENTSTORE_CONNECTION_STRING: world!.cluster.connectionString, DATA_DIR: world!.dataDir });
      assert.equal(cliJson<unknown[]>(listed), [], 'operations list shows no pending or unknown operation');
    } finally {
      await proxy.close();
    }
  });
}

test.run();
