// `npm run bench [-- --quick] [--json] [--only <name>[,<name>…]] [--profile] [--from-sources]`
//
// Runs every scenario, each with its servers and its load generators in separate
// processes, each figure beside a baseline measured in the same run. Progress goes to stderr;
// stdout gets the table, or with --json one JSON document {machine, scenarios: [rows]}.
// --quick shrinks every scenario (the whole run in about two and a half minutes, a smoke test); --profile profiles the
// service (profiles in bench/profiles/, summarise with bench/profile-summary.ts): admin-write and
// admin-read profile their measured run alone through the service's inspector and log the
// summary's command line (requests and the main thread's CPU), the others use --cpu-prof;
// --wait-quiet <s> waits up to s seconds before each scenario for the machine to be ≥ 85% idle
// (these machines are shared; each scenario's idle share at start is reported either way).
// The service runs compiled, as deployed (bench/lib/build.ts); --from-sources runs it through tsx.
// `--only sse-100k` holds 100,000 signed-in SSE connections on one node (as many as the run's
// open-files limit allows where it cannot raise it) from several loopback source addresses.
// `--only soak` runs the soak (10 min of mixed load on one service; ~1 min with --quick), which
// is never part of the default set: it is a long run for leaks and drift, not a figure per change.
// `--only replay-10m` starts the service on ten million events, twice (the second from the
// read-model snapshot); generating that log takes ~8 minutes the first time (then it is cached).
// `--only pg` runs the PostgreSQL scenarios (pg-store-append, pg-admin-write, pg-node-budget,
// pg-freeze, pg-admin-read, pg-replay; each also by name), never part of the default set either: they need
// PostgreSQL's server binaries (pg-store-append also pgbench), and make a throwaway cluster for
// the run (removed at the end, or when the run is interrupted).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildService } from './lib/build.js';
import { log, machineIdle, OthersMeter, round, waitForQuiet } from './lib/proc.js';
import { clusterCpuSeconds, startBenchCluster, type PostgresCluster } from './lib/postgres.js';
import { machine, table, type ScenarioReport } from './lib/report.js';
import { adminRead, adminWrite, forwardOverhead } from './scenarios/admin.js';
import { startSimulator, type BenchContext, type Running } from './scenarios/common.js';
import { loginFlood } from './scenarios/loginFlood.js';
import { pgAdminRead, pgAdminWrite, pgReplay } from './scenarios/postgres.js';
import { pgFreeze } from './scenarios/pgFreeze.js';
import { pgNodeBudget } from './scenarios/pgNodeBudget.js';
import { pgStoreAppend } from './scenarios/pgStore.js';
import { pushFairness } from './scenarios/pushFairness.js';
import { replay, replay10m } from './scenarios/replay.js';
import { soak } from './scenarios/soak.js';
import { fanout, sseCapacity } from './scenarios/sse.js';
import { sse100k } from './scenarios/sse100k.js';

const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<ScenarioReport>> = {
  'admin-write': adminWrite,
  'admin-read': adminRead,
  'forward-overhead': forwardOverhead,
  'sse-capacity': sseCapacity,
  fanout,
  replay,
  'login-flood': loginFlood,
  'push-fairness': pushFairness,
};
/** Run only when named in --only. */
const ON_REQUEST: typeof SCENARIOS = {
  soak,
  'sse-100k': sse100k,
  'replay-10m': replay10m,
  'pg-store-append': pgStoreAppend,
  'pg-admin-write': pgAdminWrite,
  'pg-node-budget': pgNodeBudget,
  'pg-freeze': pgFreeze,
  'pg-admin-read': pgAdminRead,
  'pg-replay': pgReplay,
};
/** Names --only takes for several scenarios. */
const GROUPS: Record<string, string[]> = { pg: ['pg-store-append', 'pg-admin-write', 'pg-node-budget', 'pg-freeze', 'pg-admin-read', 'pg-replay'] };

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'wait-quiet': { type: 'string' },
    'from-sources': { type: 'boolean', default: false },
  },
});

const selected = values.only ? [...new Set(values.only.split(',').flatMap((s) => GROUPS[s.trim()] ?? [s.trim()]))] : Object.keys(SCENARIOS);
const scenario = (name: string) => SCENARIOS[name] ?? ON_REQUEST[name];
for (const name of selected) {
  if (!scenario(name)) {
    process.stderr.write(
      `Unknown scenario "${name}"; scenarios: ${Object.keys(SCENARIOS).join(', ')}; with --only also: ${Object.keys(ON_REQUEST).join(', ')}; groups: ${Object.keys(GROUPS).join(', ')}\n`,
    );
    process.exit(64);
  }
}

// The service as deployed (compiled), unless --from-sources: every scenario's service process
// (bench/serve.ts) loads what this points at.
const buildStarted = performance.now();
const build = values['from-sources'] ? undefined : await buildService();
if (build) {
  process.env.BENCH_SERVICE_BUILD = build.dist;
  log(`built the service as it is deployed (tsc -p tsconfig.build.json) in ${round((performance.now() - buildStarted) / 1000, 1)} s`);
}

const tmp = mkdtempSync(join(tmpdir(), 'community-bridge-bench-'));
let simulator: Promise<Running> | undefined;
let postgres: Promise<PostgresCluster> | undefined;
let cluster: PostgresCluster | undefined;
const ctx: BenchContext = {
  quick: values.quick,
  tmp,
  profile: values.profile,
  simulator: () =>
    (simulator ??= startSimulator().then((sim) => {
      simPid = sim.child.pid;
      return sim;
    })),
  postgres: () => (postgres ??= startBenchCluster().then((started) => (cluster = started))),
};
// Interrupted, the run still removes its cluster: the cluster's exit hook stops the server,
// which pg_ctl started outside this process group, and removes its files.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    rmSync(tmp, { recursive: true, force: true });
    build?.remove();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}
const started = performance.now();
const startedAt = new Date();
const host = machine();
const reports: ScenarioReport[] = [];
/** Per scenario: how idle the machine was just before it started (%), a noise indicator. */
const idleAtStart: Record<string, number> = {};
/** Per scenario: cores that processes outside this run kept busy meanwhile (noise). */
const othersCores: Record<string, number> = {};
let simPid: number | undefined;
let failed = false;
try {
  for (const name of selected) {
    const idle = values['wait-quiet'] ? await waitForQuiet(Number(values['wait-quiet'])) : await machineIdle(ctx.quick ? 100 : 1000);
    idleAtStart[name] = Math.round(idle * 100);
    log(`— ${name}${ctx.quick ? ' (quick)' : ''} (machine ${idleAtStart[name]}% idle)`);
    const t0 = performance.now();
    const others = new OthersMeter(
      () => (simPid ? [simPid] : []),
      () => (cluster ? clusterCpuSeconds(cluster) : 0),
    );
    try {
      reports.push(await scenario(name)!(ctx));
    } catch (error) {
      failed = true;
      log(`${name} failed: ${(error as Error).stack ?? error}`);
      reports.push({ name, rows: [{ name, metric: 'failed', value: NaN, baseline: null, ratio: null, goal: '', met: false, error: String((error as Error).message) }] });
    }
    othersCores[name] = round(others.stop(), 2);
    log(`  ${name} took ${round((performance.now() - t0) / 1000, 1)} s; other processes kept ${othersCores[name]} cores busy meanwhile`);
  }
} finally {
  if (simulator !== undefined) await (await simulator.catch(() => undefined))?.child.stop();
  if (postgres !== undefined) await (await postgres.catch(() => undefined))?.destroy();
  rmSync(tmp, { recursive: true, force: true });
  build?.remove();
}
log(`done in ${round((performance.now() - started) / 1000, 1)} s`);

if (values.json) {
  const scenarios = reports.flatMap((r) =>
    r.rows.map((row) => ({
      ...row,
      ...(r.memory && { rssRestMb: r.memory.restMb, rssPeakMb: r.memory.peakMb }),
      machineIdlePercentAtStart: idleAtStart[r.name],
      otherProcessesCores: othersCores[r.name],
      ...(r.notes?.length && { notes: r.notes }),
    })),
  );
  process.stdout.write(
    `${JSON.stringify({ machine: host, startedAt: startedAt.toISOString(), quick: ctx.quick, durationS: round((performance.now() - started) / 1000, 1), scenarios }, null, 2)}\n`,
  );
} else {
  const header =
    `Run started ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC${ctx.quick ? ' (--quick)' : ''}, ${round((performance.now() - started) / 1000)} s: ` +
    `${host.cores} cores (${host.cpuModel}), ${host.memoryGb} GB, Node ${host.node}, load average at start ${host.loadAverageAtStart.join(' / ')}`;
  const idleLine =
    `Machine idle just before each scenario: ${Object.entries(idleAtStart)
      .map(([n, p]) => `${n} ${p}%`)
      .join(', ')}\n` +
    `Cores kept busy by other processes during each scenario (noise): ${Object.entries(othersCores)
      .map(([n, c]) => `${n} ${c}`)
      .join(', ')}`;
  process.stdout.write(`\n${header}\n${idleLine}\n\n${table(reports)}\n`);
}
process.exitCode = failed ? 1 : 0;
