// What the scenarios share: starting the simulator, the service and baselines as child
// processes, and running the load generators.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { freePort } from '../lib/inspector.js';
import type { PostgresCluster } from '../lib/postgres.js';
import { MemorySampler, sleep, startChild, type Child } from '../lib/proc.js';
import type { Row } from '../lib/report.js';

export interface BenchContext {
  quick: boolean;
  /**
   * The platform simulator (one process for the whole run, seeded with the 1,000 bench users),
   * started on first use; the runner stops it at the end.
   */
  simulator(): Promise<Running>;
  /** Base temp directory of this run; each service gets a fresh data dir under it. */
  tmp: string;
  /**
   * Profile the service (profiles go to bench/profiles/<scenario>/): with --cpu-prof over its
   * whole life, or, for scenarios that profile their measured run alone, through its inspector.
   */
  profile: boolean;
  /**
   * The run's throwaway PostgreSQL cluster (durable settings, bench/lib/postgres.ts), started on
   * first use; the runner removes it at the end.
   */
  postgres(): Promise<PostgresCluster>;
}

export interface Running {
  child: Child;
  url: string;
}

/** The number of users the shared simulator knows (benchOid(0) … benchOid(SIM_USERS - 1)). */
export const SIM_USERS = 1000;

export async function startSimulator(users: number = SIM_USERS): Promise<Running> {
  const child = startChild<{ url: string }>('simulator', 'bench/sim.ts', { env: { BENCH_USERS: String(users) } });
  const { url } = await child.ready;
  return { child, url };
}

export interface RunningService extends Running {
  apiKey: string;
  /** Keys of the apps named in BENCH_MORE_APPS, by app. */
  keys: Record<string, string>;
  memory: MemorySampler;
  dataDir: string;
  /** --profile of the measured run alone: the service's inspector port and where profiles go. */
  profile?: { port: number; dir: string };
}

export async function startBenchService(
  ctx: BenchContext,
  scenario: string,
  simUrl: string,
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
  childName = 'service',
  options: {
    /** A command the service runs under (e.g. `prlimit --nofile=…`). */
    launcher?: string[];
    /** With --profile: the whole process's life, or only the measured run (through the inspector). */
    profiled?: 'whole life' | 'measured run';
  } = {},
): Promise<RunningService> {
  const dataDir = mkdtempSync(join(ctx.tmp, `${scenario}-`));
  const profileDir = `bench/profiles/${scenario}`;
  const { launcher, profiled = 'whole life' } = options;
  const inspectPort = ctx.profile && profiled === 'measured run' ? await freePort() : undefined;
  const profileFlags = !ctx.profile ? [] : inspectPort !== undefined ? [`--inspect=127.0.0.1:${inspectPort}`] : ['--cpu-prof', '--cpu-prof-dir', profileDir];
  const child = startChild<{ url: string; apiKey: string; keys: Record<string, string> }>(childName, 'bench/serve.ts', {
    env: {
      DATA_DIR: dataDir,
      COMMUNITY_URL: simUrl,
      COMMUNITY_KEY: SIMULATOR_KEY,
      LOG_LEVEL: 'warn',
      SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
      // Every load generator connects from one loopback address: the per-address caps would
      // refuse all but its first few hundred streams, and its connects past their rate; the
      // node's rate of connects would spread a scenario's thousands of them over minutes.
      REALTIME_MAX_CONNECTIONS_PER_IP: '1000000',
      HTTP_MAX_CONNECTIONS_PER_IP: '1000000',
      REALTIME_CONNECTS_PER_SECOND: '0',
      REALTIME_CONNECTS_PER_NODE_PER_SECOND: '0',
      ...env,
    },
    nodeFlags: [...nodeFlags, ...profileFlags],
    // A node on PostgreSQL migrates the schema and catches up with the log before it listens.
    readyTimeoutMs: 120_000,
    launcher,
  });
  const { url, apiKey, keys } = await child.ready;
  const memory = new MemorySampler(child.pid);
  await sleep(300);
  memory.markRest();
  memory.start();
  return { child, url, apiKey, keys, memory, dataDir, ...(inspectPort !== undefined && { profile: { port: inspectPort, dir: profileDir } }) };
}

export async function startBaseline(name: string, script: string, env: Record<string, string> = {}): Promise<Running & { memory: MemorySampler }> {
  const child = startChild<{ url: string }>(name, script, { env });
  const { url } = await child.ready;
  const memory = new MemorySampler(child.pid);
  await sleep(200);
  memory.markRest();
  memory.start();
  return { child, url, memory };
}

export interface LoadResult {
  ok: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  non2xx?: number;
  /** Answers that were the workload's refusal by design (bench/latency.ts). */
  refused?: number;
  /** How long the measured run took (bench/load.ts). */
  durationS?: number;
  errors: number;
  timeouts?: number;
  next?: number;
}

/** Same-run ratio; null when there is no baseline. */
export const ratio = (value: number, baseline: number | null) => (baseline ? value / baseline : null);

export type RowFields = Pick<Row, 'name' | 'metric' | 'value' | 'baseline' | 'goal' | 'met'> & { ratio?: number | null; [extra: string]: unknown };

export function row(fields: RowFields): Row {
  const { name, metric, value, baseline, goal, met, ratio: given, ...extra } = fields;
  return { name, metric, value, baseline, ratio: given === undefined ? ratio(value, baseline) : given, goal, met, ...extra };
}

/** Warns in the notes when a load run saw errors or non-2xx answers. */
export function loadProblems(label: string, result: LoadResult): string[] {
  const bad = (result.non2xx ?? 0) + result.errors + (result.timeouts ?? 0);
  return bad > 0 ? [`${label}: ${result.non2xx ?? 0} non-2xx, ${result.errors} errors, ${result.timeouts ?? 0} timeouts out of ${result.ok + bad}`] : [];
}

/** "CPU per request: service 420 µs, …": where a 2-core machine's time went during a run. */
export function cpuNote(label: string, cpuS: Record<string, number>, result: LoadResult & { cpuS?: number }, seconds: number): string {
  const all = { ...cpuS, 'load generator': result.cpuS ?? NaN };
  const per = Object.entries(all).map(([name, s]) => `${name} ${Math.round((s * 1e6) / Math.max(1, result.ok))} µs`);
  const cores = Object.values(all).reduce((a, s) => a + s, 0) / seconds;
  return `${label} CPU per request: ${per.join(', ')} (together ${cores.toFixed(2)} cores busy)`;
}
