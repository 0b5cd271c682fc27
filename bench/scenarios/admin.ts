// admin-write, admin-read and forward-overhead: the admin API under autocannon (or the bench's
// own latency client), the simulator as the platform in its own process, each figure beside a
// bare node:http baseline measured in the same run. admin-write and admin-read are also measured
// against their spec floor (bench/baselines/floor-server.ts): the bare baselines skip the user
// sync the spec requires on every request, so they alone cannot say how close to what the spec
// allows the service is.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { durableWriteLatency } from '../lib/disk.js';
import { startCpuProfile } from '../lib/inspector.js';
import { CpuMeter, cpuSecondsOf, log, round, runToResult, startChild } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import type { WorkloadName } from '../lib/workloads.js';
import { cpuNote, loadProblems, row, startBaseline, startBenchService, type BenchContext, type LoadResult } from './common.js';

export const USERS = 1000;

export interface LoadArgs {
  url: string;
  workload: WorkloadName;
  apiKey?: string;
  connections: number;
  durationS?: number;
  amount?: number;
  start?: number;
  warmupAmount?: number;
  /** Several servers of one deployment: the connections split evenly across them (bench/load.ts). */
  targets?: Array<{ url: string; apiKey?: string }>;
  /** Requests per second for the whole generator (none: closed loop). */
  overallRate?: number;
  clientId?: string;
}

export async function autocannon(args: LoadArgs): Promise<LoadResult> {
  return runToResult('autocannon', 'bench/load.ts', { args: [JSON.stringify({ users: USERS, ...args })] });
}

/**
 * A warm-up of `warmupAmount` requests, then the measured run, in one autocannon process;
 * `pids` (and `meters`: functions answering CPU seconds so far, e.g. a database server's) are
 * CPU-metered over the measured run only. Resolves with the result and the CPU used. With
 * `profile` (a service started for --profile of its measured run), the measured run alone is
 * profiled, and the log names the file and the requests it holds (profile-summary's --per).
 */
export async function warmThenMeasure(
  args: LoadArgs & { warmupAmount: number },
  pids: Record<string, number>,
  meters: Record<string, () => number> = {},
  profile?: { port: number; dir: string },
) {
  const child = startChild('autocannon', 'bench/load.ts', { args: [JSON.stringify({ users: USERS, ...args })], expectReady: false });
  try {
    const warm = args.warmupAmount > 0 ? await child.nextResult<{ warmupProblems: number }>() : { warmupProblems: 0 };
    const stopProfile = profile && (await startCpuProfile(profile.port));
    // The profile is of the main thread (its thread id is the process id): its CPU scales the profile's wall-time samples.
    const mainThread = pids.service;
    const mainCpuS = mainThread === undefined ? Number.NaN : cpuSecondsOf(mainThread, mainThread);
    const cpu = new CpuMeter(pids).start();
    const metered = Object.fromEntries(Object.entries(meters).map(([name, read]) => [name, read()]));
    const result: LoadResult = await child.nextResult();
    const cpuS = { ...cpu.stop(), ...Object.fromEntries(Object.entries(meters).map(([name, read]) => [name, read() - metered[name]!])) };
    if (stopProfile) {
      const mainCpu = mainThread === undefined ? Number.NaN : cpuSecondsOf(mainThread, mainThread) - mainCpuS;
      const file = join(profile.dir, `measured-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
      mkdirSync(profile.dir, { recursive: true });
      writeFileSync(file, JSON.stringify(await stopProfile()));
      const requests = result.ok + (result.non2xx ?? 0);
      log(`profile of the measured run: ${file}; npx tsx bench/profile-summary.ts ${file} --per=${requests} --cpu=${round(mainCpu, 2)}`);
    }
    return { result, cpuS, warmupProblems: warm.warmupProblems };
  } finally {
    await child.stop();
  }
}

export async function latency(args: {
  url: string;
  workload: WorkloadName;
  apiKey?: string;
  connections: number;
  durationS: number;
  rate: number;
  warmupS?: number;
}): Promise<LoadResult> {
  return runToResult('latency', 'bench/latency.ts', { args: [JSON.stringify({ users: USERS, ...args })] });
}

/**
 * The spec floor, started once for a scenario's rounds: each run is under the same load as the
 * service's, with the same simulator (whose CPU counts: the floor makes the same platform call per
 * request).
 */
async function startFloor(mode: 'write' | 'read', simulator: { url: string; pid: number }, load: Omit<LoadArgs, 'url'> & { warmupAmount: number }, dbFile: string) {
  const server = await startBaseline(`${mode}-floor`, 'bench/baselines/floor-server.ts', { MODE: mode, SIM_URL: simulator.url, DB_FILE: dbFile, BENCH_USERS: String(USERS) });
  return {
    run: () => warmThenMeasure({ ...load, url: server.url }, { floor: server.child.pid, simulator: simulator.pid }),
    stop: () => server.child.stop(),
  };
}

type MeasuredRun = Awaited<ReturnType<typeof warmThenMeasure>>;

/**
 * The service and its spec floor, `rounds` times each, alternating (service, floor, service, …),
 * each one's quicker run kept: the ratio of two runs minutes apart measured the machine's drift as
 * much as the service (the floor's CPU per request varies by half between runs of one quiet hour),
 * and noise only ever slows a run down. Every round's figure is logged and noted.
 */
async function serviceAgainstFloor(
  label: string,
  rounds: number,
  runs: { service(round: number): Promise<MeasuredRun>; floor(): Promise<MeasuredRun> },
  notes: string[],
): Promise<{ service: MeasuredRun; floor: MeasuredRun }> {
  let kept: { service: MeasuredRun; floor: MeasuredRun } | undefined;
  const seen: string[] = [];
  for (let round_ = 0; round_ < rounds; round_++) {
    const service = await runs.service(round_);
    log(`${label} service${rounds > 1 ? ` (round ${round_ + 1})` : ''}:`, describe(service.result));
    const floor = await runs.floor();
    log(`${label} spec floor${rounds > 1 ? ` (round ${round_ + 1})` : ''}:`, describe(floor.result));
    seen.push(`${round(service.result.rps)} / ${round(floor.result.rps)}`);
    kept = {
      service: !kept || service.result.rps > kept.service.result.rps ? service : kept.service,
      floor: !kept || floor.result.rps > kept.floor.result.rps ? floor : kept.floor,
    };
  }
  if (rounds > 1)
    notes.push(`the service and the spec floor measured ${rounds} times each, alternating, the quicker run of each kept (req/s, service / floor, by round: ${seen.join(', ')})`);
  return kept!;
}

export const FLOOR_NOTE = 'spec floor: bare node:http + the user sync (one GET /api/user/getInfoById on the simulator per request, undici Pool, keep-alive)';

export const describe = (r: LoadResult) => `${round(r.rps)} req/s, p50 ${round(r.p50, 2)} ms, p99 ${round(r.p99, 2)} ms`;

export async function adminWrite(ctx: BenchContext): Promise<ScenarioReport> {
  const durationS = ctx.quick ? 1 : 15;
  // Full: every user once per quality first, so the measured run is the steady state of known
  // users (a platform lookup, a VIP renewal, a reply). Quick: none (autocannon rounds every run
  // up to whole seconds, and a quick run is a smoke test, not a figure to keep).
  const warmupAmount = ctx.quick ? 0 : 2 * USERS;
  const connections = 64;
  const notes: string[] = [];

  const sim = await ctx.simulator();
  const service = await startBenchService(ctx, 'admin-write', sim.url, {}, [], 'service', { profiled: 'measured run' });
  const floorServer = await startFloor(
    'write',
    { url: sim.url, pid: sim.child.pid },
    { workload: 'vip-submit', connections, durationS, warmupAmount: Math.min(warmupAmount, 500) },
    join(service.dataDir, 'floor.sqlite'),
  );
  const kept = await serviceAgainstFloor(
    'admin-write',
    ctx.quick ? 1 : 2,
    {
      service: (round_) =>
        warmThenMeasure(
          { url: service.url, workload: 'vip-submit', apiKey: service.apiKey, connections, durationS, warmupAmount },
          { service: service.child.pid, simulator: sim.child.pid },
          {},
          round_ === 0 ? service.profile : undefined,
        ),
      floor: floorServer.run,
    },
    notes,
  );
  await floorServer.stop();
  const run = kept.service;
  const measured = run.result;
  notes.push(cpuNote('service run', run.cpuS, measured, durationS));
  if (run.warmupProblems) notes.push(`warm-up: ${run.warmupProblems} failed requests`);
  notes.push(...loadProblems('service', measured));
  const floor = kept.floor.result;
  notes.push(cpuNote('spec floor run', kept.floor.cpuS, floor, durationS));
  if (kept.floor.warmupProblems) notes.push(`spec floor warm-up: ${kept.floor.warmupProblems} failed requests`);
  notes.push(...loadProblems('spec floor', floor));
  const memory = service.memory.stop();
  await service.child.stop();

  const baselines: { FULL?: LoadResult; NORMAL?: LoadResult } = {};
  // Quick: only the baseline the ratio is taken against.
  for (const sync of ctx.quick ? (['FULL'] as const) : (['FULL', 'NORMAL'] as const)) {
    const server = await startBaseline('write-baseline', 'bench/baselines/write-server.ts', { DB_FILE: join(service.dataDir, `baseline-${sync}.sqlite`), SYNC: sync });
    const base = await warmThenMeasure(
      { url: server.url, workload: 'vip-submit', connections, durationS, warmupAmount: Math.min(warmupAmount, 500) },
      { baseline: server.child.pid },
    );
    baselines[sync] = base.result;
    notes.push(cpuNote(`baseline ${sync} run`, base.cpuS, base.result, durationS));
    log(`admin-write baseline (synchronous=${sync}):`, describe(base.result));
    notes.push(...loadProblems(`baseline ${sync}`, base.result));
    await server.child.stop();
  }
  const base = baselines.FULL!;
  notes.push(`${FLOOR_NOTE} + one INSERT, WAL, synchronous=FULL, group commit on a writer thread, each answer after its own commit`);
  notes.push(
    `baseline: bare node:http + one better-sqlite3 INSERT per request in WAL mode with synchronous=FULL (each answer waits for its own fsync, the service's durability promise)` +
      (baselines.NORMAL
        ? `; the same server with synchronous=NORMAL (no fsync per commit) made ${round(baselines.NORMAL.rps)} req/s: ratio ${round(measured.rps / baselines.NORMAL.rps, 2)}`
        : ''),
  );
  return {
    name: 'admin-write',
    memory,
    notes,
    rows: [
      row({
        name: 'admin-write',
        metric: 'req/s (64 conns)',
        value: measured.rps,
        baseline: base.rps,
        goal: '≥ 4,000, ratio ≥ 0.3',
        met: measured.rps >= 4000 && measured.rps / base.rps >= 0.3,
        baselineNoFsync: baselines.NORMAL?.rps ?? null,
        errors: (measured.non2xx ?? 0) + measured.errors,
      }),
      row({
        name: 'admin-write',
        metric: 'req/s (64 conns), spec floor',
        value: measured.rps,
        baseline: floor.rps,
        goal: 'ratio ≥ 0.6',
        met: floor.ok > 0 && measured.rps / floor.rps >= 0.6,
        baselineKind: 'spec floor',
      }),
      row({ name: 'admin-write', metric: 'p99 latency ms', value: measured.p99, baseline: base.p99, goal: '≤ 30', met: measured.p99 <= 30, p50: measured.p50 }),
      row({
        name: 'admin-write',
        metric: 'p99 latency ms, spec floor',
        value: measured.p99,
        baseline: floor.p99,
        goal: '≤ 2 × floor',
        met: floor.ok > 0 && measured.p99 <= 2 * floor.p99,
        p50: measured.p50,
        floorP50: floor.p50,
        baselineKind: 'spec floor',
      }),
    ],
  };
}

export async function adminRead(ctx: BenchContext): Promise<ScenarioReport> {
  const durationS = ctx.quick ? 1 : 15;
  const connections = 64;
  const notes: string[] = [];

  const sim = await ctx.simulator();
  const service = await startBenchService(ctx, 'admin-read', sim.url, {}, [], 'service', { profiled: 'measured run' });
  // Every user gets both VIP records, so each read answers a two-record list (quick: the users
  // reached in half a second get one record, the others answer an empty list).
  const seed = ctx.quick
    ? await latency({ url: service.url, workload: 'vip-submit', apiKey: service.apiKey, connections, durationS: 0.5, rate: 0 })
    : await autocannon({ url: service.url, workload: 'vip-submit', apiKey: service.apiKey, connections, amount: 2 * USERS });
  notes.push(...loadProblems('seed', seed));
  service.memory.markRest();
  const readLoad = { workload: 'vip-read' as const, connections, durationS, warmupAmount: ctx.quick ? 0 : 2 * USERS };
  const floorServer = await startFloor('read', { url: sim.url, pid: sim.child.pid }, readLoad, '');
  const kept = await serviceAgainstFloor(
    'admin-read',
    ctx.quick ? 1 : 2,
    {
      service: (round_) =>
        warmThenMeasure(
          { ...readLoad, url: service.url, apiKey: service.apiKey },
          { service: service.child.pid, simulator: sim.child.pid },
          {},
          round_ === 0 ? service.profile : undefined,
        ),
      floor: floorServer.run,
    },
    notes,
  );
  await floorServer.stop();
  const measured = kept.service.result;
  notes.push(cpuNote('service run', kept.service.cpuS, measured, durationS));
  notes.push(...loadProblems('service', measured));
  const floor = kept.floor.result;
  notes.push(cpuNote('spec floor run', kept.floor.cpuS, floor, durationS));
  notes.push(...loadProblems('spec floor', floor));
  const memory = service.memory.stop();
  await service.child.stop();

  const server = await startBaseline('read-baseline', 'bench/baselines/read-server.ts', { BENCH_USERS: String(USERS) });
  const baseRun = await warmThenMeasure({ ...readLoad, url: server.url }, { baseline: server.child.pid });
  const base = baseRun.result;
  notes.push(cpuNote('baseline run', baseRun.cpuS, base, durationS));
  log('admin-read baseline:', describe(base));
  notes.push(...loadProblems('baseline', base));
  await server.child.stop();
  notes.push(`${FLOOR_NOTE} + the user's records from a Map`);
  return {
    name: 'admin-read',
    memory,
    notes,
    rows: [
      row({
        name: 'admin-read',
        metric: 'req/s (64 conns)',
        value: measured.rps,
        baseline: base.rps,
        goal: '≥ 6,000, ratio ≥ 0.3',
        met: measured.rps >= 6000 && measured.rps / base.rps >= 0.3,
        p50: measured.p50,
        p99: measured.p99,
      }),
      row({
        name: 'admin-read',
        metric: 'req/s (64 conns), spec floor',
        value: measured.rps,
        baseline: floor.rps,
        goal: 'ratio ≥ 0.6',
        met: floor.ok > 0 && measured.rps / floor.rps >= 0.6,
        p99: measured.p99,
        floorP99: floor.p99,
        baselineKind: 'spec floor',
      }),
    ],
  };
}

export async function forwardOverhead(ctx: BenchContext): Promise<ScenarioReport> {
  const durationS = ctx.quick ? 1 : 10;
  const pacedS = ctx.quick ? 1 : 20;
  const connections = 16;
  const rate = 100;
  const notes: string[] = [];
  const disk = await durableWriteLatency(ctx.tmp, ctx.quick ? 50 : 200, 1000 / rate);

  const sim = await ctx.simulator();
  const service = await startBenchService(ctx, 'forward-overhead', sim.url);
  const viaService = { url: service.url, workload: 'points-edit' as const, apiKey: service.apiKey, connections };
  const direct = { url: sim.url, workload: 'points-direct' as const, connections };
  // Warm-up: registers every user and warms both paths.
  // (Quick: a 1 s warm-up inside the first paced runs instead.)
  if (!ctx.quick) {
    notes.push(...loadProblems('warm-up', await autocannon({ ...viaService, amount: 2 * USERS })));
    await autocannon({ ...direct, amount: 2 * USERS });
  }
  service.memory.markRest();

  // Paced: the same light rate both ways (a small share of what the service can take), so the
  // difference is what the service adds to one call, not queueing. Closed loop: each connection
  // sends again at once (saturation), as `autocannon -c 16` would.
  const warmupS = ctx.quick ? 0.5 : 0;
  const paced = { service: await latency({ ...viaService, durationS: pacedS, rate, warmupS }), direct: await latency({ ...direct, durationS: pacedS, rate, warmupS }) };
  const cpu = new CpuMeter({ service: service.child.pid, simulator: sim.child.pid }).start();
  const closedService = await latency({ ...viaService, durationS, rate: 0 });
  notes.push(cpuNote('closed-loop service run', cpu.stop(), closedService, durationS));
  const closed = { service: closedService, direct: await latency({ ...direct, durationS, rate: 0 }) };
  for (const [label, pair] of Object.entries({ [`paced ${rate} req/s`]: paced, 'closed loop': closed })) {
    log(`forward-overhead ${label}: service ${describe(pair.service)} | direct ${describe(pair.direct)}`);
    notes.push(...loadProblems(`${label} service`, pair.service), ...loadProblems(`${label} direct`, pair.direct));
  }
  const memory = service.memory.stop();
  await service.child.stop();

  const added = (pair: typeof paced, p: 'p50' | 'p99') => pair.service[p] - pair.direct[p];
  // The goal is set at a light, paced rate; the closed-loop rows show what saturation adds.
  const figure = (pair: typeof paced, p: 'p50' | 'p99', label: string, limit?: number) =>
    row({
      name: 'forward-overhead',
      metric: `added ${p} ms, ${label}`,
      value: added(pair, p),
      baseline: pair.direct[p],
      ratio: pair.service[p] / pair.direct[p],
      goal: limit === undefined ? '—' : `≤ ${limit}`,
      met: limit === undefined ? null : added(pair, p) <= limit,
      service: pair.service[p],
      serviceRps: pair.service.rps,
      directRps: pair.direct.rps,
    });
  notes.push(
    `baseline column: the same call straight to the simulator; ratio = service / direct. Paced runs send ${rate} req/s over ${connections} connections both ways; ` +
      `closed-loop runs saturate (service ${round(closed.service.rps)} req/s, direct ${round(closed.direct.rps)} req/s), so their added latency is mostly queueing`,
    `the disk under the data directory: a durable write of a one-event commit's size (12 KB in place + fdatasync), ${1000 / rate} ms apart as the paced run's commits are, ` +
      `takes p50 ${round(disk.p50, 2)} ms (p99 ${round(disk.p99, 2)}); every forwarded write waits for two commits (its intent before the platform is called, its outcome before the answer) besides the user lookup`,
  );
  return {
    name: 'forward-overhead',
    memory,
    notes,
    rows: [figure(paced, 'p50', `paced ${rate}/s`, 1.5), figure(paced, 'p99', `paced ${rate}/s`, 5), figure(closed, 'p50', 'closed loop'), figure(closed, 'p99', 'closed loop')],
  };
}
