// sse-100k (run only when named): one node holding 100,000 signed-in SSE connections, opened from
// several loopback source addresses (127.0.0.2, …: one (source, destination) pair has ~28,000
// ephemeral ports), by client processes of at most 12,500 connections each. Reports RSS per
// connection and for the node, the time to open them all, whether every connection got its
// heartbeats, and a broadcast to all of them (every one delivered, latency p50 / p99).
//
// Descriptors: Node raises its soft open-files limit to the hard one as it starts, and nothing in
// a process can raise the hard one. The service is started under `prlimit --nofile=N:N` when this
// run may raise limits (root with CAP_SYS_RESOURCE); otherwise it keeps the run's own limit, and
// the scenario holds as many connections as the node's default cap allows under it, and says so.
// `signedInMemory` is the same measure at a smaller size, for sse-capacity.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { maxConnectionsFor, maxSocketsFor, openFilesLimits } from '../../src/openFilesLimit.js';
import { log, round, sleep } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { benchOid } from '../lib/users.js';
import { row, SIM_USERS, startBenchService, type BenchContext, type RunningService } from './common.js';
import { percentile, post, split, startWorkers, waitForMessages, type Workers } from './sse.js';

const TARGET = 100_000;
const PER_WORKER = 12_500;
const HEARTBEAT_MS = 5000;

/** The streams a node holds by default under this soft limit (config.ts). */
function defaultStreamsCap(soft: number): number {
  const sockets = maxSocketsFor(soft);
  return Math.min(maxConnectionsFor(soft), sockets - Math.max(1, Math.ceil(sockets / 20)));
}

/** Whether this run may start a process with `nofile` descriptors (prlimit raises the hard limit). */
function canRaiseTo(nofile: number): boolean {
  try {
    execFileSync('prlimit', [`--nofile=${nofile}:${nofile}`, 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Held {
  users: number;
  perUser: number;
  opened: number;
  openS: number;
  idleKb: number;
  openKb: number;
  failures: string[];
}

/** Signs `users` users in through the real OpenID flow and opens `perUser` connections for each. */
async function openSignedIn(service: RunningService, workers: Workers, users: number, perUser: number): Promise<Held> {
  const oIds = Array.from({ length: users }, (_, i) => benchOid(i));
  const byWorker = split(oIds, workers.list.length);
  const idleKb = service.memory.sample();
  const started = performance.now();
  const signed = await workers.all('signin', (k) => ({ oIds: byWorker[k], perUser, concurrency: 8 }));
  const openS = (performance.now() - started) / 1000;
  await sleep(2000); // let the allocation settle before reading RSS
  const openKb = service.memory.sample();
  return {
    users,
    perUser,
    opened: signed.reduce((a, s) => a + s.opened, 0),
    openS,
    idleKb,
    openKb,
    failures: signed.flatMap((s) => s.failures).slice(0, 3),
  };
}

/** RSS per signed-in connection at `users` × `perUser` (sse-capacity's signed-in row). */
export async function signedInMemory(ctx: BenchContext, users: number, perUser: number): Promise<Held & { kbPerConnection: number }> {
  const sim = await ctx.simulator();
  const service = await startBenchService(ctx, 'sse-signed-in', sim.url, {
    REALTIME_HEARTBEAT_MS: '15000',
    SIGN_IN_PAGES_PER_SECOND: '0',
    SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0',
  });
  const workers = await startWorkers(4, service.url);
  try {
    // Warm-up as sse-capacity's: connections opened and closed before the idle figure.
    await workers.all('open', () => ({ count: 100, concurrency: 16 }));
    await workers.all('close');
    await sleep(1500);
    const held = await openSignedIn(service, workers, users, perUser);
    return { ...held, kbPerConnection: (held.openKb - held.idleKb) / Math.max(1, held.opened) };
  } finally {
    service.memory.stop();
    await workers.all('close').catch(() => undefined);
    await workers.stop();
    await service.child.stop();
  }
}

export async function sse100k(ctx: BenchContext): Promise<ScenarioReport> {
  const notes: string[] = [];
  const wanted = ctx.quick ? 2000 : Number(process.env.BENCH_SSE_CONNECTIONS ?? TARGET);
  // Streams, sockets for the admin API above them, and the node's own files.
  const nofile = Math.ceil((wanted * 1.2) / 1000) * 1000 + 1000;
  const raise = canRaiseTo(nofile);
  const own = openFilesLimits(readFileSync('/proc/self/limits', 'utf8'));
  const soft = raise ? nofile : (own?.hard ?? 1024);
  const cap = defaultStreamsCap(soft);
  const held = Math.min(wanted, cap);
  if (!raise) {
    notes.push(
      `this run cannot raise the open-files limit (prlimit --nofile=${nofile}:${nofile} refused: no CAP_SYS_RESOURCE; hard limit ${own?.hard}, fs.nr_open ${readFileSync('/proc/sys/fs/nr_open', 'utf8').trim()}): ` +
        `the node keeps a hard limit of ${own?.hard}, so its default cap is ${cap} streams, and ${held.toLocaleString('en-US')} of the ${wanted.toLocaleString('en-US')} connections are held`,
    );
  }
  // Every user holds the same number of connections; the simulator knows SIM_USERS users.
  const users = Math.min(SIM_USERS, held);
  const perUser = Math.floor(held / users);
  const total = users * perUser;
  const workerCount = Math.max(4, Math.ceil(total / PER_WORKER));
  log(`sse-100k: ${total} connections (${users} users × ${perUser}) from ${workerCount} client processes on 127.0.0.2 – 127.0.0.${1 + workerCount}; node nofile ${soft}`);

  const sim = await ctx.simulator();
  const service = await startBenchService(
    ctx,
    'sse-100k',
    sim.url,
    { REALTIME_HEARTBEAT_MS: String(HEARTBEAT_MS), SIGN_IN_PAGES_PER_SECOND: '0', SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0' },
    [],
    'service',
    raise ? { launcher: ['prlimit', `--nofile=${nofile}:${nofile}`] } : {},
  );
  const workers = await startWorkers(workerCount, service.url, 'sse-clients', true);
  try {
    await workers.all('open', () => ({ count: 50, concurrency: 16 }));
    await workers.all('close');
    await sleep(1500);
    const opened = await openSignedIn(service, workers, users, perUser);
    const kbPerConnection = (opened.openKb - opened.idleKb) / Math.max(1, opened.opened);
    log(
      `sse-100k: ${opened.opened} open in ${round(opened.openS, 1)} s, RSS ${round(opened.idleKb / 1024)} → ${round(opened.openKb / 1024)} MB (${round(kbPerConnection, 1)} KB each)`,
    );
    if (opened.opened !== total) notes.push(`opened ${opened.opened} of ${total}: ${opened.failures.join('; ')}`);

    // Heartbeats: every connection gets one per interval; two intervals and a pass are awaited.
    await workers.all('reset');
    await sleep(2 * HEARTBEAT_MS + 1500);
    const beats = await workers.all('stats');
    const withoutHeartbeat = beats.reduce((a, s) => a + s.withoutHeartbeat, 0);
    const fewestHeartbeats = Math.min(...beats.map((s) => s.fewestHeartbeats));
    const stillOpen = beats.reduce((a, s) => a + s.open, 0);
    log(`sse-100k heartbeats: ${stillOpen - withoutHeartbeat} of ${stillOpen} open connections got one in ${(2 * HEARTBEAT_MS + 1500) / 1000} s (fewest ${fewestHeartbeats})`);

    // Broadcasts: one push naming every user, after one warm-up.
    const oIds = Array.from({ length: users }, (_, i) => benchOid(i));
    const broadcasts = ctx.quick ? 1 : 3;
    const latencies: number[] = [];
    let delivered = 0;
    for (let i = 0; i <= broadcasts; i++) {
      await workers.all('reset');
      const answer = await post(
        `${service.url}/adm/message/push`,
        { oIds, name: 'bench', data: { kind: 'broadcast', seq: i, t: performance.timeOrigin + performance.now() } },
        { apikey: service.apiKey },
      );
      if (answer.status !== 200) throw new Error(`push answered ${answer.status}: ${answer.text}`);
      const result = await waitForMessages(workers, total, 10_000, true);
      if (i > 0) {
        latencies.push(...result.latencies);
        delivered += result.messages;
      }
      await sleep(1000);
    }
    const p50 = percentile(latencies, 0.5);
    const p99 = percentile(latencies, 0.99);
    log(`sse-100k broadcast: ${delivered} of ${total * broadcasts} delivered, p50 ${round(p50)} ms, p99 ${round(p99)} ms`);
    const memory = service.memory.stop();
    notes.push(
      `${total.toLocaleString('en-US')} signed-in connections (${users} users signed in through the login page and the simulator's OpenID, then ${perUser - 1} more connections each with the session cookie), ` +
        `${workerCount} client processes on as many loopback source addresses; heartbeat interval ${HEARTBEAT_MS / 1000} s; broadcast = one push naming all ${users} users, ${broadcasts} times after a warm-up; ` +
        `RSS per connection = (RSS 2 s after the last connect − RSS before) / connections; the node's peak RSS ${round(memory.peakMb)} MB`,
    );
    return {
      name: 'sse-100k',
      memory,
      notes,
      rows: [
        row({
          name: 'sse-100k',
          metric: `node RSS MB, ${total.toLocaleString('en-US')} open`,
          value: opened.openKb / 1024,
          baseline: null,
          goal: total >= TARGET ? '≤ 1,536 at 100,000' : `100,000 not held (${total.toLocaleString('en-US')})`,
          met: total >= TARGET ? opened.openKb / 1024 <= 1536 : false,
          idleMb: opened.idleKb / 1024,
        }),
        row({ name: 'sse-100k', metric: 'RSS KB per signed-in connection', value: kbPerConnection, baseline: null, goal: '≤ 15', met: kbPerConnection <= 15 }),
        row({ name: 'sse-100k', metric: 'seconds to open all', value: opened.openS, baseline: null, goal: '—', met: null, opened: opened.opened }),
        row({
          name: 'sse-100k',
          metric: `connections without a heartbeat in ${(2 * HEARTBEAT_MS + 1500) / 1000} s`,
          value: withoutHeartbeat,
          baseline: null,
          goal: '0',
          met: withoutHeartbeat === 0 && stillOpen === total,
          open: stillOpen,
          fewestHeartbeats,
        }),
        row({
          name: 'sse-100k',
          metric: 'broadcast delivery p99 ms',
          value: p99,
          baseline: null,
          goal: 'all delivered',
          met: delivered === total * broadcasts,
          p50,
          delivered,
          expected: total * broadcasts,
        }),
      ],
    };
  } finally {
    await workers.all('close').catch(() => undefined);
    await workers.stop();
    await service.child.stop();
  }
}
