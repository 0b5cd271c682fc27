// pg-store-append: the PostgreSQL adapter's appends against what the database itself does for the
// same work. 64 appenders append one fenced event at a time (bench/pg-appenders.ts), from one
// process and then from three (the 64 split among them), each run on a database of its own,
// beside the floor: one-row INSERT transactions on the same table and indexes at 64 clients,
// without lock or NOTIFY, synchronous_commit = on — pgbench, PostgreSQL's own load generator,
// each transaction one INSERT of one event row into the adapter's `events` table (its migration
// made it, so every index the adapter maintains is there), committed durably.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PostgresEventStore } from '../../src/store/postgres.js';
import { clusterCpuSeconds, freshDatabase, postgresAvailable, serverSettings, type PostgresCluster } from '../lib/postgres.js';
import { log, round, startChild } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { row, type BenchContext } from './common.js';

const APPENDERS = 64;
const PROCESS_COUNTS = [1, 3] as const;

/** The floor's one transaction: one event row, as an append of one event writes it. */
const FLOOR_SCRIPT = `INSERT INTO events (position, stream, revision, type, data, metadata, created)
VALUES (nextval('events_seq'), 'floor-' || gen_random_uuid(), 0, 'VipRenewed',
  '{"userId":"u00000000000001","quality":"vip","expired":"2030-01-01T00:00:00.000Z","at":"2026-01-01T00:00:00.000Z"}', NULL, clock_timestamp());
`;

/** A database with the adapter's schema (a store opened once migrates it). */
async function migratedDatabase(cluster: PostgresCluster, label: string): Promise<string> {
  const url = await freshDatabase(cluster, label);
  await (await PostgresEventStore.open({ connectionString: url })).close();
  return url;
}

/** one-row INSERT transactions on the same table and indexes at 64 clients, without lock or NOTIFY, synchronous_commit = on */
async function oneRowInsertFloor(ctx: BenchContext, cluster: PostgresCluster, durationS: number): Promise<{ tps: number; cpuS: number }> {
  const url = await migratedDatabase(cluster, 'store_floor');
  const script = join(ctx.tmp, 'one-row-insert.sql');
  writeFileSync(script, FLOOR_SCRIPT);
  const binaries = postgresAvailable();
  if ('missing' in binaries) throw new Error(binaries.missing);
  const pgbench = join(binaries.dir, 'pgbench');
  const database = new URL(url).pathname.slice(1);
  const before = clusterCpuSeconds(cluster);
  const out = execFileSync(
    pgbench,
    ['-n', '-c', String(APPENDERS), '-j', '2', '-T', String(durationS), '-f', script, '-h', '127.0.0.1', '-p', String(cluster.port), '-U', 'postgres', database],
    { encoding: 'utf8', env: { ...process.env, PGOPTIONS: '-c synchronous_commit=on' } },
  );
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1]);
  if (!Number.isFinite(tps)) throw new Error(`pgbench said: ${out}`);
  return { tps, cpuS: clusterCpuSeconds(cluster) - before };
}

/** 64 appenders through the adapter, split among `processes` processes; appends per second. */
async function adapterAppends(cluster: PostgresCluster, processes: number, durationS: number): Promise<{ rate: number; cpuS: number }> {
  const url = await migratedDatabase(cluster, `store_append_${processes}p`);
  const shares = Array.from({ length: processes }, (_, k) => Math.floor(APPENDERS / processes) + (k < APPENDERS % processes ? 1 : 0));
  const children = shares.map((appenders, k) =>
    startChild(`appenders-${k + 1}`, 'bench/pg-appenders.ts', { args: [JSON.stringify({ connectionString: url, appenders, seconds: durationS })], ipc: true }),
  );
  await Promise.all(children.map((child) => child.ready));
  const before = clusterCpuSeconds(cluster);
  const results = children.map((child) => child.nextResult<{ appends: number; seconds: number }>());
  for (const child of children) child.send({ type: 'go' });
  const done = await Promise.all(results);
  const cpuS = clusterCpuSeconds(cluster) - before;
  await Promise.all(children.map((child) => child.stop()));
  return { rate: done.reduce((sum, r) => sum + r.appends / r.seconds, 0), cpuS };
}

export async function pgStoreAppend(ctx: BenchContext): Promise<ScenarioReport> {
  const durationS = ctx.quick ? 2 : 15;
  const cluster = await ctx.postgres();
  const notes = [`PostgreSQL: ${await serverSettings(cluster)}`];
  const floor = await oneRowInsertFloor(ctx, cluster, durationS);
  log(`floor (one-row INSERT transactions at ${APPENDERS} clients, pgbench): ${round(floor.tps)} transactions/s`);
  const rows = [];
  for (const processes of PROCESS_COUNTS) {
    const measured = await adapterAppends(cluster, processes, durationS);
    log(`adapter, ${APPENDERS} appenders in ${processes} process(es): ${round(measured.rate)} appends/s`);
    notes.push(
      `${processes} process(es): database CPU ${round((measured.cpuS * 1e6) / (measured.rate * durationS))} µs per append; floor ${round((floor.cpuS * 1e6) / (floor.tps * durationS))} µs per transaction`,
    );
    rows.push(
      row({
        name: 'pg-store-append',
        metric: `fenced appends/s, ${APPENDERS} appenders, ${processes === 1 ? '1 process' : `${processes} processes`}`,
        value: measured.rate,
        baseline: floor.tps,
        goal: 'ratio ≥ 1.0',
        met: measured.rate >= floor.tps,
        baselineKind: `one-row INSERT transactions on the same table and indexes at ${APPENDERS} clients, without lock or NOTIFY, synchronous_commit = on`,
      }),
    );
  }
  notes.push(
    'floor: pgbench -c 64 -j 2, each transaction one INSERT of one event row into the adapter’s events table (same indexes), autocommit, synchronous_commit = on; no advisory lock, no NOTIFY, no revision check',
    'adapter: PostgresEventStore.append of one event with an expected revision and a claim stream alongside (a fenced write), 64 loops at once, each waiting for its append before the next',
  );
  return { name: 'pg-store-append', notes, rows };
}
