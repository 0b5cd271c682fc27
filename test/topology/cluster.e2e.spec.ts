// The production topology, end to end: nginx (deploy/nginx.conf) in front of three service nodes
// with their own NODE_IDs on one PostgreSQL, the simulator as the platform. Under a mixed load
// (points edits and VIP submits with Idempotency-Keys, pushes, 200 signed-in SSE clients
// connected through nginx), one node is killed (SIGKILL) and then PostgreSQL is restarted.
// Nothing acknowledged is lost, the platform's ledger shows nothing applied twice, and every SSE
// client, reconnecting through nginx as a browser does, receives every push exactly once, in order.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator, type SimulatorState } from '../../src/community/simulator.js';
import { eventually } from '../support/eventually.js';
import { defaultUsers } from '../support/harness.js';
import { nginxMissing, startProxy, type NginxProxy } from '../support/nginx.js';
import { freePort } from '../support/ports.js';
import { postgresBinaries, startCluster, type PostgresCluster } from '../support/postgres.js';
import { cli, issueKey, killServiceProcesses, requestOrNoAnswer, startServiceProcess, type Answer, type ServiceProcess } from '../support/serviceProcess.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { ReconnectingStream } from './reconnectingStream.js';

const CLIENTS = 200;
const LOAD_S = 24;
const KILL_AT_S = 6;
const RESTART_DB_AT_S = 13;
/** Users the points edits and VIP submits go to (the SSE clients' users are the first CLIENTS). */
const WRITE_USERS = 40;
const NODE_ENV = {
  TRUST_PROXY: 'true',
  SESSION_SECRET: 'topology-session-secret-0123456789abcdef',
  NODE_HEARTBEAT_MS: '200',
  IDEMPOTENCY_CLAIM_STALE_MS: '3000',
  OPERATION_PENDING_GRACE_MS: '6000',
  COMMUNITY_TIMEOUT_MS: '2000',
  REALTIME_MAX_CONNECTIONS_PER_IP: '10000',
  // Every sign-in comes from this one address through nginx: the sign-in page bounds are not what this is about.
  SIGN_IN_PAGES_PER_SECOND: '0',
  SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0',
  // The harness waits for the "listening" line.
  LOG_LEVEL: 'info',
};

const binaries = postgresBinaries();
const missing = 'missing' in binaries ? binaries.missing : nginxMissing;

interface World {
  cluster: PostgresCluster;
  sim: SimulatorState;
  closeSim: () => Promise<void>;
  dataDir: string;
  nodes: ServiceProcess[];
  proxy: NginxProxy;
  key: string;
  streams: ReconnectingStream[];
}

const oIdOf = (i: number) => String(1700000000000 + i);
const topology = suite<World>('three nodes behind nginx on one PostgreSQL');

topology.before(async (world) => {
  if (missing) return;
  world.cluster = await startCluster();
  const users = [...defaultUsers(), ...Array.from({ length: Math.max(CLIENTS, WRITE_USERS) }, (_, i) => ({ oId: oIdOf(i), userName: `player${i}`, points: 0 }))];
  const simulator = createSimulator({ users });
  const running = await simulator.listen();
  world.sim = simulator.state;
  world.closeSim = running.close;
  world.dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-topology-'));
  // The CLI and the nodes all use the one database.
  process.env.EVENTSTORE_CONNECTION_STRING = world.cluster.connectionString;
  world.key = (await issueKey(world.dataDir)).key;
  const proxyPort = await freePort();
  const env = { ...NODE_ENV, EVENTSTORE_CONNECTION_STRING: world.cluster.connectionString, PUBLIC_URL: `http://127.0.0.1:${proxyPort}` };
  world.nodes = [];
  for (const nodeId of ['node-1', 'node-2', 'node-3']) world.nodes.push(await startServiceProcess({ dataDir: world.dataDir, communityUrl: running.url, nodeId, env }));
  world.proxy = await startProxy(
    world.nodes.map((node) => new URL(node.url).host),
    proxyPort,
  );
  world.streams = [];
});

topology.after(async (world) => {
  await Promise.all((world.streams ?? []).map((stream) => stream.close()));
  await world.proxy?.stop();
  await killServiceProcesses();
  await world.closeSim?.();
  await world.cluster?.destroy();
  if (world.dataDir) await rm(world.dataDir, { recursive: true, force: true });
});

/** Sends until an answer that settles the request: 200, or an outcome that must not be resent. */
async function settled(send: () => Promise<Answer>): Promise<Answer> {
  let answer: Answer = { status: 0, body: undefined, text: 'never sent', headers: new Headers() };
  for (let attempt = 0; attempt < 120; attempt++) {
    answer = await send();
    if (answer.status === 200 || /^Outcome unknown/.test(answer.body?.message ?? '') || answer.status === 422) return answer;
    await sleep(250);
  }
  return answer;
}

const run = missing ? topology.skip : topology;
if (missing) console.log(`skipped: topology suite — ${missing}`);

run(`${CLIENTS} signed-in clients, writes and pushes through nginx survive a killed node and a database restart`, async (world) => {
  const { proxy, key } = world;
  const proxied = { url: proxy.url };
  // Sign-ins through the proxy: the callback may reach another node than the one holding the stream.
  const cookies: string[] = [];
  for (let i = 0; i < CLIENTS; i += 20) {
    cookies.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(20, CLIENTS - i) }, async (_, k) => {
          const popup = await connect(proxied);
          const cookie = await signIn(proxied, popup.clientId, oIdOf(i + k));
          popup.stream.close();
          return cookie;
        }),
      )),
    );
  }
  world.streams = cookies.map((cookie) => new ReconnectingStream(proxy.url, cookie));
  await eventually(() => world.streams.every((stream) => stream.frames.some((frame) => frame.event === 'PB_CONNECT' && frame.data.login_status === true)), {
    what: 'every client to be connected and signed in',
    timeoutMs: 30_000,
    everyMs: 100,
  });

  // Every request goes through the proxy, as a game server's would.
  const viaProxy = (path: string, body: unknown, idempotencyKey: string): Promise<Answer> => requestOrNoAnswer(proxy.url, 'POST', path, { body, apiKey: key, idempotencyKey });

  const ackedPushes: number[] = [];
  const points: Array<{ memo: string; answer: Answer }> = [];
  const vips: Array<{ key: string; answer: Answer }> = [];
  const end = Date.now() + LOAD_S * 1000;
  const allOids = Array.from({ length: CLIENTS }, (_, i) => oIdOf(i));
  const pushes = (async () => {
    for (let seq = 0; Date.now() < end; seq++) {
      const answer = await settled(() => viaProxy('/adm/message/push', { oIds: allOids, name: 'topology', data: { seq } }, `push-${seq}`));
      assert.is(answer.status, 200, `push ${seq}: ${answer.text}`);
      ackedPushes.push(seq);
      await sleep(150);
    }
  })();
  const writes = (part: 'points' | 'vip') =>
    Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        for (let i = 0; Date.now() < end; i++) {
          const n = i * 4 + lane;
          const oId = oIdOf(n % WRITE_USERS);
          if (part === 'points') {
            const memo = `topology-${n}`;
            points.push({ memo, answer: await settled(() => viaProxy('/adm/points/edit', { oId, point: 1, memo }, `pts-${n}`)) });
          } else {
            const expired = `2030-01-${String(1 + (n % 28)).padStart(2, '0')} 00:00:00`;
            vips.push({ key: `vip-${n}`, answer: await settled(() => viaProxy('/adm/vip/submit', { oId, quality: n % 2 ? 'vip' : 'svip', expired }, `vip-${n}`)) });
          }
        }
      }),
    );
  const faults = (async () => {
    await sleep(KILL_AT_S * 1000);
    await world.nodes[1]!.kill();
    await sleep((RESTART_DB_AT_S - KILL_AT_S) * 1000);
    await world.cluster.restart();
  })();
  await Promise.all([pushes, writes('points'), writes('vip'), faults]);

  // Every client gets every acknowledged push, once, in order, through whichever node it reached.
  // One push more after the load: once every client has it, whatever one missed or got twice shows.
  const last = await settled(() => viaProxy('/adm/message/push', { oIds: allOids, name: 'topology', data: { seq: 'last' } }, 'push-last'));
  assert.is(last.status, 200, `the last push: ${last.text}`);
  await eventually(() => world.streams.every((stream) => stream.messages().some((message) => message.data.seq === 'last')), {
    what: () =>
      `every client to get the last push (${world.streams.filter((stream) => stream.messages().some((message) => message.data.seq === 'last')).length} of ${CLIENTS} have)`,
    timeoutMs: 60_000,
    everyMs: 200,
  });
  for (const [i, stream] of world.streams.entries()) {
    const seqs = stream.messages().map((message) => message.data.seq);
    assert.equal(seqs, [...ackedPushes, 'last'], `client ${i} (connected ${stream.connects} times) got ${seqs.length - 1} of ${ackedPushes.length} pushes`);
    const ids = stream.frames.filter((frame) => frame.event === 'message').map((frame) => frame.id!);
    assert.ok(
      ids.every((id, k) => k === 0 || id > ids[k - 1]!),
      `client ${i}: frame ids not increasing`,
    );
  }
  const reconnected = world.streams.filter((stream) => stream.connects > 1).length;
  assert.ok(reconnected > 0, 'some clients were on the killed node and reconnected');

  // The platform's ledger: nothing twice, everything acknowledged exactly once.
  for (const { memo, answer } of points) {
    const applied = world.sim.pointsApplied(memo);
    assert.ok(applied <= 1, `${memo} applied ${applied} times`);
    if (answer.status === 200) assert.is(applied, 1, `${memo} acknowledged, applied ${applied} times`);
    else assert.match(answer.body?.message ?? '', /^Outcome unknown/, `${memo}: ${answer.text}`);
  }
  // Every VIP submit was acknowledged, and each is in the log once.
  for (const { key: vipKey, answer } of vips) assert.is(answer.status, 200, `${vipKey}: ${answer.text}`);
  const logged = await cli(world.dataDir, 'events', '--stream', 'vip', '--json');
  assert.is(logged.code, 0, logged.stderr);
  const vipEvents = logged.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((e) => e.type === 'VipGranted' || e.type === 'VipRenewed');
  assert.is(vipEvents.length, vips.length, `${vipEvents.length} VIP events for ${vips.length} acknowledged submits`);
  assert.ok(ackedPushes.length > 20 && points.length > 20, `load too light: ${ackedPushes.length} pushes, ${points.length} points edits`);
  const unknown = points.filter(({ answer }) => answer.status !== 200).length;
  console.log(
    `topology: ${ackedPushes.length} pushes × ${CLIENTS} clients delivered once each, in order (${reconnected} clients reconnected); ` +
      `${points.length} points edits (${unknown} unknown outcomes, none applied twice), ${vips.length} VIP submits, all recorded once`,
  );
});

topology.run();
