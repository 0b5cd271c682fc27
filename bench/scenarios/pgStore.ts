// pg-store-append: the PostgreSQL adapter's appends without the service around them, on the
// run's throwaway cluster (bench/lib/postgres.ts: durable settings). 64 appenders append fenced
// events (bench/pg-appenders.ts) from one process, then from three processes on one database
// (64 split across them), each run on a database of its own; beside the floor INSERT_FLOOR
// (bench/lib/pgAppendLoad.ts), run by pgbench on a database of its own with the same schema.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { openPool } from '../../src/store/postgresPool.js';
import { migrate } from '../../src/store/postgresSchema.js';
import { insertFloor, INSERT_FLOOR, type FloorResult } from '../lib/pgAppendLoad.js';
import { clusterCpuSeconds, freshDatabase, resetStatements, serverSettings, topStatements } from '../lib/postgres.js';
import { log, round, startChild, type Child } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { row, type BenchContext } from './common.js';

const APPENDERS = 64;
const PROCESS_COUNTS = [1, 3] as const;

interface AppendersResult {
  appends: number;
  seconds: number;
  /** Appends per hundredth of a millisecond they took. */
  latencies: Record<string, number>;
  errors: number;
  cpuS: number;
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  appendersCpuS: number;
  databaseCpuS: number;
  appends: number;
}

/** The p-th percentile in ms of the appends the histograms hold together. */
function percentile(histograms: Array<Record<string, number>>, p: number): number {
  const counts = new Map<number, number>();
  for (const h of histograms) for (const [bucket, n] of Object.entries(h)) counts.set(Number(bucket), (counts.get(Number(bucket)) ?? 0) + n);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  let seen = 0;
  for (const bucket of [...counts.keys()].sort((a, b) => a - b)) {
    seen += counts.get(bucket)!;
    if (seen > (p / 100) * total) return bucket / 100;
  }
  return NaN;
}

/** `count` processes of appenders on one fresh database, started together; their figures merged. */
async function measureAppenders(connectionString: string, count: number, load: { warmupS: number; durationS: number }, databaseCpu: () => number): Promise<Measured> {
  const children: Child[] = [];
  try {
    for (let k = 0; k < count; k++) {
      const appenders = Math.floor(APPENDERS / count) + (k < APPENDERS % count ? 1 : 0);
      children.push(startChild(`appenders-${k + 1}`, 'bench/pg-appenders.ts', { args: [JSON.stringify({ connectionString, appenders, label: `p${k + 1}`, ...load })], ipc: true }));
      // One after the other: the first migrates the schema, the others find it current.
      await children.at(-1)!.ready;
    }
    const results = children.map((child) => child.nextResult<AppendersResult>());
    let databaseAtStart = 0;
    // The database's CPU over the measured part, as near as the parent can tell it.
    const measuredStarts = setTimeout(() => (databaseAtStart = databaseCpu()), load.warmupS * 1000);
    for (const child of children) child.send({ type: 'go' });
    const all = await Promise.all(results);
    clearTimeout(measuredStarts);
    const databaseCpuS = databaseCpu() - databaseAtStart;
    const appends = all.reduce((a, r) => a + r.appends, 0);
    const seconds = Math.max(...all.map((r) => r.seconds));
    const histograms = all.map((r) => r.latencies);
    return {
      appends,
      rps: appends / seconds,
      p50: percentile(histograms, 50),
      p99: percentile(histograms, 99),
      errors: all.reduce((a, r) => a + r.errors, 0),
      appendersCpuS: all.reduce((a, r) => a + r.cpuS, 0),
      databaseCpuS,
    };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
  }
}

const processesLabel = (count: number) => (count === 1 ? '1 process' : `${count} processes`);
const perAppendUs = (cpuS: number, appends: number) => Math.round((cpuS * 1e6) / Math.max(1, appends));

export async function pgStoreAppend(ctx: BenchContext): Promise<ScenarioReport> {
  const warmupS = ctx.quick ? 0.5 : 3;
  const durationS = ctx.quick ? 1 : 15;
  const cluster = await ctx.postgres();
  const notes = [`PostgreSQL: ${await serverSettings(cluster)}`];

  const floorUrl = await freshDatabase(cluster, 'append_floor');
  const { pool } = openPool(floorUrl, { max: 1, unbounded: true });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  const dir = mkdtempSync(join(ctx.tmp, 'pg-store-append-'));
  await insertFloor(floorUrl, { clients: APPENDERS, seconds: Math.max(1, Math.round(warmupS)), dir });
  const floorCpuAtStart = clusterCpuSeconds(cluster);
  const floor: FloorResult = await insertFloor(floorUrl, { clients: APPENDERS, seconds: durationS, dir });
  const floorDatabaseCpuS = clusterCpuSeconds(cluster) - floorCpuAtStart;
  log(`pg-store-append floor: ${round(floor.tps)} inserts/s, latency average ${round(floor.latencyAverageMs, 2)} ms, ${floor.failed} failed`);

  const measured: Record<number, Measured> = {};
  for (const count of PROCESS_COUNTS) {
    const url = await freshDatabase(cluster, `append_${count}p`);
    await resetStatements(cluster);
    const run = await measureAppenders(url, count, { warmupS, durationS }, () => clusterCpuSeconds(cluster));
    for (const statement of await topStatements(cluster, 5)) notes.push(`${processesLabel(count)}, database time: ${statement}`);
    measured[count] = run;
    log(`pg-store-append ${processesLabel(count)}: ${round(run.rps)} appends/s, p50 ${round(run.p50, 2)} ms, p99 ${round(run.p99, 2)} ms, ${run.errors} errors`);
    notes.push(
      `${processesLabel(count)}: ${round(run.rps)} appends/s, p50 ${round(run.p50, 2)} ms, p99 ${round(run.p99, 2)} ms, ${run.errors} failed appends; CPU per append: ` +
        `appender processes ${perAppendUs(run.appendersCpuS, run.appends)} µs, database ${perAppendUs(run.databaseCpuS, run.appends)} µs`,
    );
  }
  notes.push(
    `appends: ${APPENDERS} appenders in all (split evenly across the processes), each appending one VIP event at a time to a stream of its own through PostgresEventStore.append, ` +
      `alongside its claim stream checked at its revision (as the command handler fences a keyed request's write); ${warmupS} s unmeasured, then ${durationS} s measured`,
    `floor: ${INSERT_FLOOR}: pgbench -M prepared -c ${APPENDERS} -j 2, each client inserting the same event's row (same JSON) into its own stream in autocommit, ` +
      `position from the sequence; ${Math.max(1, Math.round(warmupS))} s unmeasured, then ${durationS} s: ${round(floor.tps)} inserts/s, latency average ${round(floor.latencyAverageMs, 2)} ms, ` +
      `${floor.failed} failed, database CPU per insert ${perAppendUs(floorDatabaseCpuS, floor.transactions)} µs`,
  );
  return {
    name: 'pg-store-append',
    notes,
    rows: PROCESS_COUNTS.map((count) => {
      const run = measured[count]!;
      return row({
        name: 'pg-store-append',
        metric: `appends/s (64 appenders), ${processesLabel(count)}, insert floor`,
        value: run.rps,
        baseline: floor.tps,
        goal: 'ratio ≥ 1.0',
        met: floor.transactions > 0 && run.errors === 0 && run.rps / floor.tps >= 1,
        p50: run.p50,
        p99: run.p99,
        errors: run.errors,
        floorLatencyAverageMs: floor.latencyAverageMs,
        baselineKind: INSERT_FLOOR,
      });
    }),
  };
}
