// sse-capacity and fanout: thousands of raw SSE connections held by client worker processes
// (bench/sse-clients.ts), each bound to its own loopback source address, against the service and
// against a bare node:http SSE broadcaster (bench/baselines/sse-server.ts) in the same run.
import { request } from 'node:http';
import { collectGarbage, freePort } from '../lib/inspector.js';
import { CpuMeter, log, type MemorySampler, round, runToResult, sleep, startChild, type Child } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import type { WorkerAnswers } from '../sse-clients.js';
import { benchOid } from '../lib/users.js';
import { loadProblems, row, startBaseline, startBenchService, type BenchContext, type LoadResult } from './common.js';
import { signedInMemory } from './sse100k.js';

const now = () => performance.timeOrigin + performance.now();

export interface Workers {
  list: Child[];
  /** Sends one command to every worker (with per-worker fields) and collects the answers. */
  all<K extends keyof WorkerAnswers>(type: K, perWorker?: (index: number) => object): Promise<Array<WorkerAnswers[K]>>;
  stop(): Promise<void>;
}

/**
 * Client processes. 15,000 connections to one server address fit in the ~28,000 ephemeral ports
 * of one (source, destination) pair, so the workers do not bind source addresses unless told to
 * (`sourceAddresses`) or BENCH_SOURCE_ADDRESSES=1: worker k then binds 127.0.0.(2 + k) (binding
 * slows every connect down).
 */
export async function startWorkers(count: number, url: string, label = 'sse-clients', sourceAddresses = process.env.BENCH_SOURCE_ADDRESSES === '1'): Promise<Workers> {
  const list = Array.from({ length: count }, (_, k) =>
    startChild(`${label}-${k}`, 'bench/sse-clients.ts', {
      ipc: true,
      args: [JSON.stringify({ url, localAddress: sourceAddresses ? `127.0.0.${2 + k}` : '', communityName: 'fishpi' })],
    }),
  );
  await Promise.all(list.map((w) => w.ready));
  return {
    list,
    async all(type, perWorker) {
      const answers = await Promise.all(
        list.map((w, k) => {
          const answer = w.message<WorkerAnswers[typeof type] & { error?: string }>(`${type}:done`);
          w.send({ type, ...perWorker?.(k) });
          return answer;
        }),
      );
      const failed = answers.find((a) => a.error);
      if (failed) throw new Error(`sse worker: ${failed.error}`);
      return answers;
    },
    async stop() {
      await Promise.all(list.map((w) => w.stop()));
    },
  };
}

/** Points the workers at another server: they are cheap to restart. */
async function restartWorkers(workers: Workers, url: string): Promise<Workers> {
  await workers.stop();
  return startWorkers(workers.list.length, url);
}

export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Waits until the workers together counted `expected` messages, or nothing new came for `quietMs`. */
export async function waitForMessages(workers: Workers, expected: number, quietMs: number, keepLatencies = false) {
  let last = -1;
  let lastChange = performance.now();
  for (;;) {
    const stats = await workers.all('stats');
    const total = stats.reduce((a, s) => a + s.messages, 0);
    if (total >= expected || performance.now() - lastChange > quietMs) {
      const final = keepLatencies ? await workers.all('stats', () => ({ keepLatencies: true })) : stats;
      return {
        messages: final.reduce((a, s) => a + s.messages, 0),
        lastMessageAt: Math.max(...final.map((s) => s.lastMessageAt)),
        latencies: keepLatencies ? final.flatMap((s) => s.latencies as number[]) : [],
        open: final.reduce((a, s) => a + s.open, 0),
        unexpectedCloses: final.reduce((a, s) => a + s.unexpectedCloses, 0),
      };
    }
    if (total !== last) {
      last = total;
      lastChange = performance.now();
    }
    await sleep(50);
  }
}

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
};

export const split = <T>(items: T[], parts: number) => Array.from({ length: parts }, (_, k) => items.filter((_, i) => i % parts === k));

// ---------------------------------------------------------------------------------------------

export async function sseCapacity(ctx: BenchContext): Promise<ScenarioReport> {
  const total = ctx.quick ? 1000 : 10_000;
  const workerCount = ctx.quick ? 2 : 4;
  const concurrency = 64; // connection attempts in flight per worker
  const signedInUsers = ctx.quick ? 100 : 1000;
  const notes: string[] = [];

  /** RSS after two full collections, read through the server's inspector (`inspectPort`). */
  async function collectedKb(memory: MemorySampler, inspectPort: number) {
    await collectGarbage(inspectPort);
    await sleep(500);
    return memory.sample();
  }

  async function measure(url: string, memory: MemorySampler, serverPid: number, label: string, inspectPort: number) {
    const workers = await startWorkers(workerCount, url);
    // Warm-up: a few hundred connections opened and closed (JIT, pools), then the idle figure.
    await workers.all('open', () => ({ count: ctx.quick ? 50 : 100, concurrency: 16 }));
    await workers.all('close');
    await sleep(ctx.quick ? 300 : 1500);
    const idleKb = memory.sample();
    // Full runs open everything twice (closing all in between) and keep the quicker round: on a
    // shared machine noise only ever slows a round down. RSS is read in the first round.
    let best: { ok: number; elapsedS: number; cpuUsPerConnect: number; connectP99: number } | undefined;
    let openKb = NaN;
    // What the open connections keep, garbage aside: RSS after full collections with them all
    // open, less the same once they are closed.
    let openCollectedKb = NaN;
    let closedCollectedKb = NaN;
    for (let round_ = 0; round_ < (ctx.quick ? 1 : 2); round_++) {
      if (round_ > 0) await sleep(2000);
      const cpu = new CpuMeter({ server: serverPid }).start();
      const started = performance.now();
      const opened = await workers.all('open', () => ({ count: total / workerCount, concurrency }));
      const elapsedS = (performance.now() - started) / 1000;
      const cpuUsPerConnect = (cpu.stop().server! * 1e6) / total;
      const ok = opened.reduce((a, o) => a + o.opened, 0);
      const failed = opened.reduce((a, o) => a + o.failed, 0);
      if (failed > 0)
        notes.push(
          `${label}: ${failed} connections failed (${opened
            .flatMap((o) => o.failures)
            .slice(0, 3)
            .join('; ')})`,
        );
      if (round_ === 0) {
        await sleep(ctx.quick ? 500 : 2000); // let the allocation settle before reading RSS
        openKb = memory.sample();
        openCollectedKb = await collectedKb(memory, inspectPort);
      }
      log(
        `sse-capacity ${label}: ${ok} open in ${round(elapsedS, 2)} s (${round(ok / elapsedS)} connects/s)${round_ === 0 ? `, RSS ${round(idleKb / 1024)} → ${round(openKb / 1024)} MB` : ''}`,
      );
      const connectP99 = Math.max(...opened.map((o) => o.connectMs.p99 as number));
      if (!best || ok / elapsedS > best.ok / best.elapsedS) best = { ok, elapsedS, cpuUsPerConnect, connectP99 };
      await workers.all('close');
      if (round_ === 0) {
        await sleep(ctx.quick ? 300 : 1500);
        closedCollectedKb = await collectedKb(memory, inspectPort);
      }
    }
    await workers.stop();
    return {
      ok: best!.ok,
      connectsPerS: best!.ok / best!.elapsedS,
      idleMb: idleKb / 1024,
      openMb: openKb / 1024,
      kbPerConnection: (openKb - idleKb) / Math.max(1, total),
      collectedKbPerConnection: (openCollectedKb - closedCollectedKb) / Math.max(1, total),
      connectP99: best!.connectP99,
      cpuUsPerConnect: best!.cpuUsPerConnect,
    };
  }

  const sim = await ctx.simulator();
  const serviceInspector = await freePort();
  const service = await startBenchService(ctx, 'sse-capacity', sim.url, { REALTIME_HEARTBEAT_MS: '15000' }, [`--inspect=127.0.0.1:${serviceInspector}`]);
  const svc = await measure(service.url, service.memory, service.child.pid, 'service', serviceInspector);
  const memory = service.memory.stop();
  await service.child.stop();

  const bareInspector = await freePort();
  const bare = await startBaseline('sse-baseline', 'bench/baselines/sse-server.ts', { NODE_OPTIONS: `--inspect=127.0.0.1:${bareInspector}` });
  const base = await measure(bare.url, bare.memory, bare.child.pid, 'bare broadcaster', bareInspector);
  bare.memory.stop();
  await bare.child.stop();

  // Signed in: users through the real sign-in, ten connections each, on a service of their own.
  const signedIn = await signedInMemory(ctx, signedInUsers, 10);
  log(
    `sse-capacity signed in: ${signedIn.opened} open, RSS ${round(signedIn.idleKb / 1024)} → ${round(signedIn.openKb / 1024)} MB (${round(signedIn.kbPerConnection, 1)} KB each)`,
  );
  if (signedIn.opened !== signedInUsers * 10) notes.push(`signed in: ${signedIn.opened} of ${signedInUsers * 10} opened (${signedIn.failures.join('; ')})`);

  notes.push(
    `${total.toLocaleString('en-US')} anonymous connections from ${workerCount} client processes (${concurrency} attempts in flight each), ${ctx.quick ? 'once' : 'twice, the quicker round kept'}; a connect counts when its PB_CONNECT frame arrived. ` +
      `RSS per connection = (RSS with all open, ${ctx.quick ? 0.5 : 2} s after the last connect − idle RSS) / connections. Bare broadcaster: ${round(base.connectsPerS)} connects/s, ${round(base.kbPerConnection, 1)} KB/connection. CPU per connect: service ${round(svc.cpuUsPerConnect)} µs, bare ${round(base.cpuUsPerConnect)} µs. ` +
      `That RSS holds garbage not yet collected as well as what the connections keep; after two full collections (through each server's inspector) with all open, less the same once all are closed: service ${round(svc.collectedKbPerConnection, 1)} KB, bare ${round(base.collectedKbPerConnection, 1)} KB per connection`,
  );
  return {
    name: 'sse-capacity',
    memory: { ...memory, restMb: round(svc.idleMb, 1) },
    notes,
    rows: [
      row({
        name: 'sse-capacity',
        metric: `connects/s (${total.toLocaleString('en-US')})`,
        value: svc.connectsPerS,
        baseline: base.connectsPerS,
        goal: '≥ 0.8 × bare',
        met: svc.connectsPerS >= 0.8 * base.connectsPerS && svc.ok === total,
        opened: svc.ok,
        connectP99Ms: svc.connectP99,
      }),
      row({ name: 'sse-capacity', metric: 'RSS MB all open (baseline: idle)', value: svc.openMb, baseline: svc.idleMb, goal: '—', met: null }),
      row({
        name: 'sse-capacity',
        metric: 'RSS KB per connection',
        value: svc.kbPerConnection,
        baseline: base.kbPerConnection,
        goal: '≤ 10',
        met: svc.kbPerConnection <= 10,
        idleMb: svc.idleMb,
        openMb: svc.openMb,
        cpuUsPerConnect: svc.cpuUsPerConnect,
        bareCpuUsPerConnect: base.cpuUsPerConnect,
      }),
      row({
        name: 'sse-capacity',
        metric: 'RSS KB per connection after full collections',
        value: svc.collectedKbPerConnection,
        baseline: base.collectedKbPerConnection,
        goal: '—',
        met: null,
      }),
      row({
        name: 'sse-capacity',
        metric: `RSS KB per signed-in connection (${signedInUsers} users × 10)`,
        value: signedIn.kbPerConnection,
        baseline: base.kbPerConnection,
        goal: '≤ 15',
        met: signedIn.kbPerConnection <= 15 && signedIn.opened === signedInUsers * 10,
        openS: signedIn.openS,
      }),
    ],
  };
}

// ---------------------------------------------------------------------------------------------

export async function fanout(ctx: BenchContext): Promise<ScenarioReport> {
  const users = ctx.quick ? 100 : 1000;
  const perUser = 10;
  const total = users * perUser;
  const workerCount = ctx.quick ? 2 : 4;
  const oneToOneS = ctx.quick ? 1 : 10;
  const broadcasts = ctx.quick ? 1 : 10;
  const notes: string[] = [];
  const oIds = Array.from({ length: users }, (_, i) => benchOid(i));

  /** One push to every user, `broadcasts` times after one warm-up: latencies of every delivery. */
  async function broadcast(workers: Workers, pushUrl: string, headers: Record<string, string>, serverPid: number) {
    const latencies: number[] = [];
    let delivered = 0;
    let serverCpuS = 0;
    let clientCpuS = 0;
    for (let i = 0; i <= broadcasts; i++) {
      await workers.all('reset');
      const cpu = new CpuMeter({ server: serverPid, ...Object.fromEntries(workers.list.map((w, k) => [`client${k}`, w.pid])) }).start();
      const answer = await post(pushUrl, { oIds, name: 'bench', data: { kind: 'broadcast', seq: i, t: now() } }, headers);
      if (answer.status !== 200) throw new Error(`push answered ${answer.status}: ${answer.text}`);
      const result = await waitForMessages(workers, total, 5000, true);
      const used = cpu.stop();
      if (i > 0) {
        latencies.push(...result.latencies);
        delivered += result.messages;
        serverCpuS += used.server!;
        clientCpuS += Object.entries(used)
          .filter(([k]) => k !== 'server')
          .reduce((a, [, v]) => a + v, 0);
      }
      await sleep(ctx.quick ? 100 : 500);
    }
    return {
      p99: percentile(latencies, 0.99),
      p50: percentile(latencies, 0.5),
      max: percentile(latencies, 1),
      delivered,
      expected: total * broadcasts,
      serverUsPerDelivery: (serverCpuS * 1e6) / Math.max(1, delivered),
      clientUsPerDelivery: (clientCpuS * 1e6) / Math.max(1, delivered),
    };
  }

  /** Full runs: two rounds, the one with more deliveries per second kept (noise only slows). */
  async function bestOf<T extends { perS: number }>(round: () => Promise<T>): Promise<T> {
    const first = await round();
    if (ctx.quick) return first;
    const second = await round();
    return second.perS > first.perS ? second : first;
  }

  /** 1:1 pushes from autocannon at full rate: deliveries per second until the last one arrived. */
  async function oneToOne(workers: Workers, url: string, apiKey: string | undefined, serverPid: number) {
    await workers.all('reset');
    const cpu = new CpuMeter({ server: serverPid }).start();
    const started = now();
    const load: LoadResult = await runToResult('autocannon', 'bench/load.ts', {
      args: [JSON.stringify({ url, workload: 'push-one', users, apiKey, connections: 32, durationS: oneToOneS })],
    });
    const result = await waitForMessages(workers, load.ok * perUser, 3000, true);
    const seconds = (result.lastMessageAt - started) / 1000;
    const serverUsPerPush = (cpu.stop().server! * 1e6) / Math.max(1, load.ok);
    return {
      serverUsPerPush,
      load,
      delivered: result.messages,
      expected: load.ok * perUser,
      perS: result.messages / seconds,
      seconds,
      p99: percentile(result.latencies, 0.99),
      p50: percentile(result.latencies, 0.5),
      open: result.open,
      unexpectedCloses: result.unexpectedCloses,
    };
  }

  // The service: every user signs in through the real OpenID flow, then holds 10 connections.
  const sim = await ctx.simulator();
  // A thousand sign-ins from one address in a few seconds: the bounds on sign-in pages (which
  // the login-flood scenario measures) would refuse most of them.
  const service = await startBenchService(ctx, 'fanout', sim.url, { SIGN_IN_PAGES_PER_SECOND: '0', SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0' });
  let workers = await startWorkers(workerCount, service.url);
  const byWorker = split(oIds, workerCount);
  const t0 = performance.now();
  const signed = await workers.all('signin', (k) => ({ oIds: byWorker[k], perUser, concurrency: 8 }));
  const signInS = (performance.now() - t0) / 1000;
  const opened = signed.reduce((a, s) => a + s.opened, 0);
  const signedUsers = signed.reduce((a, s) => a + s.users, 0);
  const anonymous = signed.reduce((a, s) => a + s.anonymousAfterCookie, 0);
  log(`fanout: ${signedUsers} users signed in, ${opened} connections in ${round(signInS, 1)} s`);
  if (signedUsers !== users || opened !== total || anonymous > 0) {
    notes.push(
      `sign-in: ${signedUsers}/${users} users, ${opened}/${total} connections, ${anonymous} not signed in by their cookie: ${signed
        .flatMap((s) => s.failures)
        .slice(0, 3)
        .join('; ')}`,
    );
  }
  const pushHeaders = { apikey: service.apiKey };
  const svcBroadcast = await broadcast(workers, `${service.url}/adm/message/push`, pushHeaders, service.child.pid);
  log(`fanout service broadcast: ${svcBroadcast.delivered}/${svcBroadcast.expected} delivered, p50 ${round(svcBroadcast.p50, 1)} ms, p99 ${round(svcBroadcast.p99, 1)} ms`);
  const svcOne = await bestOf(() => oneToOne(workers, service.url, service.apiKey, service.child.pid));
  log(
    `fanout service 1:1: ${round(svcOne.load.rps)} pushes/s, ${svcOne.delivered}/${svcOne.expected} delivered, ${round(svcOne.perS)} msgs/s, delivery p99 ${round(svcOne.p99, 1)} ms`,
  );
  notes.push(...loadProblems('service pushes', svcOne.load));
  const memory = service.memory.stop();
  await workers.all('close');
  await service.child.stop();

  // The bare broadcaster, the same connections and the same pushes.
  const bare = await startBaseline('sse-baseline', 'bench/baselines/sse-server.ts');
  workers = await restartWorkers(workers, bare.url);
  const bareOpened = await workers.all('baseline', (k) => ({ oIds: byWorker[k], perUser, concurrency: 64 }));
  if (bareOpened.reduce((a, o) => a + o.opened, 0) !== total) notes.push('baseline: not every connection opened');
  const bareBroadcast = await broadcast(workers, `${bare.url}/adm/message/push`, {}, bare.child.pid);
  log(`fanout bare broadcast: ${bareBroadcast.delivered}/${bareBroadcast.expected} delivered, p50 ${round(bareBroadcast.p50, 1)} ms, p99 ${round(bareBroadcast.p99, 1)} ms`);
  const bareOne = await bestOf(() => oneToOne(workers, bare.url, undefined, bare.child.pid));
  log(`fanout bare 1:1: ${round(bareOne.load.rps)} pushes/s, ${bareOne.delivered}/${bareOne.expected} delivered, ${round(bareOne.perS)} msgs/s`);
  bare.memory.stop();
  await workers.all('close');
  await workers.stop();
  await bare.child.stop();

  notes.push(
    `${users} users × ${perUser} connections, signed in through the login page → simulator OpenID (sim_user) → callback in ${round(signInS, 1)} s; ` +
      `broadcast = one push naming all ${users} oIds, ${broadcasts} times (after one warm-up), latency from just before the POST to each frame parsed by a client; ` +
      `1:1 = autocannon, 32 connections, ${oneToOneS} s${ctx.quick ? '' : ' (two rounds, the better kept)'}, one oId per push (${round(svcOne.load.rps)} pushes/s accepted by the service, ${round(bareOne.load.rps)} by the bare broadcaster); ` +
      `msgs/s = frames received ÷ time from the first push to the last frame`,
  );
  notes.push(
    `CPU per broadcast delivery: service ${round(svcBroadcast.serverUsPerDelivery, 1)} µs, bare ${round(bareBroadcast.serverUsPerDelivery, 1)} µs, the client processes ${round(svcBroadcast.clientUsPerDelivery, 1)} µs; ` +
      `CPU per 1:1 push (10 deliveries): service ${round(svcOne.serverUsPerPush)} µs, bare ${round(bareOne.serverUsPerPush)} µs`,
  );
  if (svcBroadcast.delivered !== svcBroadcast.expected) notes.push(`service broadcast delivered ${svcBroadcast.delivered} of ${svcBroadcast.expected}`);
  if (svcOne.delivered < svcOne.expected)
    notes.push(`service 1:1 delivered ${svcOne.delivered} of ${svcOne.expected} frames (${svcOne.unexpectedCloses} connections closed by the server)`);
  return {
    name: 'fanout',
    memory,
    notes,
    rows: [
      row({
        name: 'fanout',
        metric: `broadcast p99 ms (${total.toLocaleString('en-US')} deliveries)`,
        value: svcBroadcast.p99,
        baseline: bareBroadcast.p99,
        goal: '≤ 1.3 × bare, all delivered',
        met: svcBroadcast.p99 <= 1.3 * bareBroadcast.p99 && svcBroadcast.delivered === svcBroadcast.expected,
        p50: svcBroadcast.p50,
        max: svcBroadcast.max,
        delivered: svcBroadcast.delivered,
        expected: svcBroadcast.expected,
      }),
      row({
        name: 'fanout',
        metric: 'delivered msgs/s (1:1 pushes)',
        value: svcOne.perS,
        baseline: bareOne.perS,
        goal: '≥ 0.5 × bare, all delivered',
        // ≥: autocannon stops with a push in flight per connection, delivered but not counted as answered.
        met: svcOne.perS / bareOne.perS >= 0.5 && svcOne.delivered >= svcOne.expected,
        pushesPerS: svcOne.load.rps,
        deliveryP99Ms: svcOne.p99,
        delivered: svcOne.delivered,
        expected: svcOne.expected,
        signInS,
      }),
    ],
  };
}
