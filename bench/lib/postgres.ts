// The bench's PostgreSQL: one throwaway cluster per run, made the way the PostgreSQL suites make
// theirs (test/support/postgres.ts: initdb in a temp dir, the binaries as the `postgres` OS user
// when we are root, removed at the end or when the process exits), but durable: the suites turn
// fsync off to stay quick, and a figure for commits that never reach the disk would say nothing.
// Every server setting is PostgreSQL 15's default except those the suites' cluster needs
// (loopback, its own port and socket directory, max_connections).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresBinaries, startCluster, type PostgresCluster } from '../../test/support/postgres.js';

export type { PostgresCluster };

/** The durability a production server runs with: a commit answers once its WAL is flushed. */
export const DURABLE_SETTINGS = { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' } as const;

/** Where the server binaries are, or why there are none (the PostgreSQL scenarios need them). */
export function postgresAvailable(): { dir: string } | { missing: string } {
  try {
    return postgresBinaries();
  } catch (error) {
    return { missing: (error as Error).message };
  }
}

/** BENCH_PG_STATEMENTS=1: the cluster keeps pg_stat_statements, and each PostgreSQL run's notes name the statements the database spent its time on. */
const statementStatistics = process.env.BENCH_PG_STATEMENTS === '1';

export async function startBenchCluster(): Promise<PostgresCluster> {
  const binaries = postgresAvailable();
  if ('missing' in binaries) throw new Error(`${binaries.missing}; install PostgreSQL's server package (Debian: postgresql) or set PG_BIN`);
  const cluster = await startCluster({ settings: { ...DURABLE_SETTINGS, ...(statementStatistics && { shared_preload_libraries: 'pg_stat_statements' }) } });
  if (statementStatistics) await cluster.sql('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  return cluster;
}

/** Forgets the statement statistics gathered so far (BENCH_PG_STATEMENTS=1; otherwise nothing). */
export async function resetStatements(cluster: PostgresCluster): Promise<void> {
  if (statementStatistics) await cluster.sql('SELECT pg_stat_statements_reset()');
}

/**
 * The statements that took most of the server's time since the last reset, one line each: calls,
 * total and mean execution time, rows (BENCH_PG_STATEMENTS=1; otherwise none).
 */
export async function topStatements(cluster: PostgresCluster, count = 8): Promise<string[]> {
  if (!statementStatistics) return [];
  const rows = await cluster.sql<{ calls: string; total: number; mean: number; rows: string; query: string }>(
    `SELECT calls, total_exec_time AS total, mean_exec_time AS mean, rows, query FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT $1`,
    [count],
  );
  return rows.map((r) => `${r.calls} calls, ${Math.round(r.total)} ms in all, ${r.mean.toFixed(3)} ms each, ${r.rows} rows: ${r.query.replace(/\s+/g, ' ').slice(0, 160)}`);
}

/** The settings a figure depends on, read back from the server (for the notes). */
export async function serverSettings(cluster: PostgresCluster): Promise<string> {
  const rows = await cluster.sql<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings
     WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'shared_buffers', 'commit_delay')
     ORDER BY name`,
  );
  return rows.map((r) => `${r.name}=${r.setting}${r.unit && r.unit !== 'ms' && r.unit !== 's' ? ` × ${r.unit}` : r.unit ? ` ${r.unit}` : ''}`).join(', ');
}

let databases = 0;

/** A fresh, empty database on the cluster for one measured run; answers its connection string. */
export function freshDatabase(cluster: PostgresCluster, label: string, poolSize?: number): Promise<string> {
  const name = `bench_${label.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_${++databases}`;
  return cluster.connectionStringFor(name).then((url) => (poolSize === undefined ? url : `${url}&pool_size=${poolSize}`));
}

/**
 * CPU seconds the cluster's processes have used so far: the postmaster, its live backends, and
 * (through the postmaster's cutime and cstime) every backend that has ended — connections end
 * with each service and floor, and their time must not read as another process's.
 */
export function clusterCpuSeconds(cluster: PostgresCluster): number {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return 0; // stopped
  }
  const fieldsOf = (pid: number | string) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  let ticks = 0;
  try {
    const own = fieldsOf(postmaster);
    ticks += Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  } catch {
    return 0;
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = fieldsOf(entry);
      if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks / 100; // USER_HZ
}
