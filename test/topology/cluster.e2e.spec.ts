// The production topology, end to end: nginx (deploy/nginx.conf) in front of three service nodes
// with their own NODE_IDs on one PostgreSQL, the simulator as the platform. Under a mixed load
// (points edits and VIP submits with Idempotency-Keys, pushes, 200 signed-in SSE clients
// connected through nginx), one node is killed (SIGKILL), another frozen (SIGSTOP), the third cut
// off from the database (its connections black-holed by a proxy of the test's own, past its query
// timeout), and then PostgreSQL is restarted. Nothing acknowledged is lost, the platform's ledger
// shows nothing applied twice, the other nodes acknowledge writes while one is frozen or cut off,
// no answer is a 500, and every SSE client, reconnecting through nginx as a browser does, receives
// every push exactly once, in order.
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
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.js';
import { cli, issueKey, killServiceProcesses, requestOrNoAnswer, startServiceProcess, type Answer, type ServiceProcess } from '../support/serviceProcess.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { ReconnectingStream } from './reconnectingStream.js';

const CLIENTS = 200;
const LOAD_S = 40;
const KILL_AT_S = 5;
/** node-3 is stopped (SIGSTOP) for FREEZE_S, then continued. */
const FREEZE_AT_S = 10;
const FREEZE_S = 6;
/** node-1's database connections are black-holed for BLACK_HOLE_S: longer than its 7 s query timeout. */
const BLACK_HOLE_AT_S = 19;
const BLACK_HOLE_S = 9;
const RESTART_DB_AT_S = 32;
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
  // The same for realtime connects: hundreds of clients open (and reopen) streams from that one address.
  REALTIME_CONNECTS_PER_SECOND: '0',
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
  /** node-1's way to the database. */
  dbLink: TcpProxy;
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
  world.dbLink = await startTcpProxy({ host: '127.0.0.1', port: world.cluster.port });
  const linked = world.cluster.connectionString.replace(`:${world.cluster.port}/`, `:${world.dbLink.port}/`);
  world.nodes = [];
  for (const nodeId of ['node-1', 'node-2', 'node-3']) {
    // Each node's sessions carry its name (pg_stat_activity.application_name).
    const connectionString = `${nodeId === 'node-1' ? linked : world.cluster.connectionString}&application_name=${nodeId}`;
    const nodeEnv = { ...env, EVENTSTORE_CONNECTION_STRING: connectionString };
    world.nodes.push(await startServiceProcess({ dataDir: world.dataDir, communityUrl: running.url, nodeId, env: nodeEnv }));
  }
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
  await world.dbLink?.close();
  await world.closeSim?.();
  await world.cluster?.destroy();
  if (world.dataDir) await rm(world.dataDir, { recursive: true, force: true });
});

/** Every answer any request got, with when it came (ms since the epoch). */
const answered: Array<{ status: number; reason: string | undefined; at: number }> = [];

/** Sends until an answer that settles the request: 200, or an outcome that must not be resent. */
async function settled(send: () => Promise<Answer>): Promise<Answer> {
  let answer: Answer = { status: 0, body: undefined, text: 'never sent', headers: new Headers() };
  for (let attempt = 0; attempt < 160; attempt++) {
    answer = await send();
    answered.push({ status: answer.status, reason: answer.body?.data?.reason, at: Date.now() });
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
  // While a node is frozen or cut off, a write sent straight to a healthy node is acknowledged
  // before the fault ends (the fault lasts until it is), and every database session the held
  // node had still lives then: the write did not wait for the server to end one. The probes are
  // VIP submits like the others: their checks below apply to them too.
  const probes: Record<string, Answer> = {};
  /** The database sessions of a node that still live, by backend pid. */
  const sessionsOf = async (node: ServiceProcess) =>
    (await world.cluster.sql<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [node.nodeId])).map((row) => row.pid);
  const heldSessions: Record<string, { before: number[]; after: number[] }> = {};
  const probe = async (fault: string, node: ServiceProcess, held: ServiceProcess) => {
    const before = await sessionsOf(held);
    const answer = await node.request('POST', '/adm/vip/submit', {
      body: { oId: oIdOf(0), quality: 'vip', expired: '2031-06-01 00:00:00' },
      apiKey: key,
      idempotencyKey: `probe-${fault.replace(' ', '-')}`,
    });
    heldSessions[fault] = { before, after: await sessionsOf(held) };
    probes[fault] = answer;
    vips.push({ key: `probe-${fault}`, answer });
  };
  const started = Date.now();
  const at = (s: number) => sleep(Math.max(0, started + s * 1000 - Date.now()));
  const faults = (async () => {
    await at(KILL_AT_S);
    await world.nodes[1]!.kill();
    await at(FREEZE_AT_S);
    const frozen = world.nodes[2]!;
    process.kill(frozen.pid, 'SIGSTOP');
    await Promise.all([probe('frozen', world.nodes[0]!, frozen), at(FREEZE_AT_S + FREEZE_S)]);
    process.kill(frozen.pid, 'SIGCONT');
    await at(BLACK_HOLE_AT_S);
    world.dbLink.blackHole();
    await Promise.all([probe('cut off', world.nodes[2]!, world.nodes[0]!), at(BLACK_HOLE_AT_S + BLACK_HOLE_S)]);
    world.dbLink.restore();
    await at(RESTART_DB_AT_S);
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
  for (const fault of ['frozen', 'cut off']) {
    assert.is(probes[fault]?.status, 200, `a write to a healthy node while another was ${fault}: ${probes[fault]?.text}`);
    const { before, after } = heldSessions[fault]!;
    assert.ok(
      before.length > 0 && before.every((pid) => after.includes(pid)),
      `the ${fault} node's sessions all live on after the write (${before.join(', ')} then, ${after.join(', ')} after)`,
    );
  }
  const failures = answered.filter((a) => a.status === 500);
  assert.equal(failures, [], "no answer was a 500: the store's trouble answers 503");
  const storeTrouble = answered.filter((a) => a.reason === 'store_unavailable').length;
  const unknown = points.filter(({ answer }) => answer.status !== 200).length;
  console.log(
    `topology: ${ackedPushes.length} pushes × ${CLIENTS} clients delivered once each, in order (${reconnected} clients reconnected); ` +
      `${points.length} points edits (${unknown} unknown outcomes, none applied twice), ${vips.length} VIP submits, all recorded once; ` +
      `${answered.length} answers, ${storeTrouble} of them 503 store_unavailable, none 500`,
  );
});

topology.run();
