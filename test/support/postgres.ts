// A throwaway PostgreSQL cluster for the PostgreSQL suites: initdb in a temp dir, a server on a
// free loopback port (its socket directory inside the temp dir too), one database, and what the
// tests do to it: stop, start, restart, and ending every connection to the database. Everything
// goes when the cluster is destroyed, or when the process exits without destroying it.
//
// PostgreSQL refuses to run as root: when this process is root, the binaries run as the
// `postgres` OS user (runuser), who owns the temp dir. The binaries are found in PG_BIN, else in
// the newest /usr/lib/postgresql/<version>/bin (Debian's layout). When there are none, the suites
// are skipped (postgresBinaries() says why) — except under CI, which installs them (.ci/run).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type * as uvu from 'uvu';
import { freePort } from './ports.js';

const SUPERUSER = 'postgres';
/** A start, stop or restart that takes longer than this fails. */
const PG_CTL_TIMEOUT_S = 30;

export type Binaries = { dir: string } | { missing: string };

/** Where initdb, pg_ctl and postgres are, or why they cannot be used here. */
export function postgresBinaries(): Binaries {
  const wanted = ['initdb', 'pg_ctl', 'postgres'];
  const candidates = process.env.PG_BIN
    ? [process.env.PG_BIN]
    : existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .filter((version) => /^\d+$/.test(version))
          .sort((a, b) => Number(b) - Number(a))
          .map((version) => `/usr/lib/postgresql/${version}/bin`)
      : [];
  const dir = candidates.find((candidate) => wanted.every((name) => existsSync(join(candidate, name))));
  if (dir) return { dir };
  const looked = process.env.PG_BIN ? `PG_BIN=${process.env.PG_BIN}` : '/usr/lib/postgresql/<version>/bin';
  const missing = `no PostgreSQL server binaries (initdb, pg_ctl, postgres) in ${looked}`;
  if (process.env.CI === 'true') throw new Error(`${missing}: CI must run the PostgreSQL suites (.ci/run installs the postgresql package)`);
  return { missing };
}

export interface PostgresCluster {
  /** postgresql://postgres@127.0.0.1:<port>/<database>?sslmode=disable */
  connectionString: string;
  /** The same server, another database: created on first use. */
  connectionStringFor(database: string): Promise<string>;
  port: number;
  /** The cluster's directory (certificates a test writes may go here). */
  dir: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** pg_ctl restart: every connection is dropped and the server comes back on the same port. */
  restart(): Promise<void>;
  /** pg_terminate_backend of every other connection to the database; answers how many were ended. */
  terminateConnections(database?: string): Promise<number>;
  /** Runs SQL as the superuser on the database. */
  sql<T extends object = Record<string, unknown>>(text: string, values?: unknown[], database?: string): Promise<T[]>;
  destroy(): Promise<void>;
}

export interface ClusterOptions {
  /** Server settings (`-c name=value`), e.g. ssl. */
  settings?: Record<string, string>;
  /** Files written into the data directory before the first start (e.g. server.crt). */
  files?: Record<string, string>;
}

function asPostgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export async function startCluster(options: ClusterOptions = {}): Promise<PostgresCluster> {
  const binaries = postgresBinaries();
  if ('missing' in binaries) throw new Error(binaries.missing);
  const owner = asPostgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'community-bridge-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  if (owner) chownSync(dir, owner.uid, owner.gid);

  const commandOf = (binary: string, args: string[]): [string, string[]] =>
    owner ? ['runuser', ['-u', SUPERUSER, '--', join(binaries.dir, binary), ...args]] : [join(binaries.dir, binary), args];
  const failed = (binary: string, args: string[], status: unknown, output: string) => {
    const serverLog = existsSync(log) ? spawnSync('tail', ['-n', '20', log], { encoding: 'utf8' }).stdout : '';
    return new Error(`${binary} ${args.join(' ')} failed (${status}): ${output}\n${serverLog}`);
  };
  const run = (binary: string, args: string[]) => {
    const [command, argv] = commandOf(binary, args);
    const result = spawnSync(command, argv, { cwd: dir, encoding: 'utf8', timeout: (PG_CTL_TIMEOUT_S + 5) * 1000 });
    if (result.status !== 0) throw failed(binary, args, result.status ?? result.signal, result.stderr || result.stdout);
  };
  // Without blocking the event loop: the code under test goes on (and fails, and retries) meanwhile.
  const runAsync = (binary: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const [command, argv] = commandOf(binary, args);
      const child = spawn(command, argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: (PG_CTL_TIMEOUT_S + 5) * 1000 });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('error', reject);
      child.on('close', (code, signal) => (code === 0 ? resolve() : reject(failed(binary, args, code ?? signal, output))));
    });

  run('initdb', ['-D', data, '-U', SUPERUSER, '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C']);
  for (const [name, content] of Object.entries(options.files ?? {})) {
    const file = join(data, name);
    writeFileSync(file, content, { mode: 0o600 });
    if (owner) chownSync(file, owner.uid, owner.gid);
  }
  const port = await freePort();
  // Durability is not under test here: no fsync keeps the suites quick.
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    unix_socket_directories: dir,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: '200',
    ...options.settings,
  };
  const serverOptions = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
  const pgCtlArgs = (action: string, extra: string[] = []) => [action, '-D', data, '-w', '-t', String(PG_CTL_TIMEOUT_S), ...extra];
  const pgCtl = (action: string, extra: string[] = []) => runAsync('pg_ctl', pgCtlArgs(action, extra));
  await pgCtl('start', ['-l', log, '-o', serverOptions]);

  let destroyed = false;
  // A test process that dies without destroy() must not leave a server running.
  const onExit = () => {
    if (destroyed) return;
    try {
      run('pg_ctl', pgCtlArgs('stop', ['-m', 'immediate']));
    } catch {
      // It may be stopped already.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  const urlFor = (database: string) => `postgresql://${SUPERUSER}@127.0.0.1:${port}/${database}?sslmode=disable`;
  const sql = async <T extends object>(text: string, values: unknown[] = [], database = 'postgres'): Promise<T[]> => {
    const client = new pg.Client({ connectionString: urlFor(database) });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const created = new Set<string>();
  const connectionStringFor = async (database: string) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`not a plain database name: ${database}`);
    if (!created.has(database)) {
      await sql(`CREATE DATABASE ${database}`);
      created.add(database);
    }
    return urlFor(database);
  };
  const database = 'bridge';
  const connectionString = await connectionStringFor(database);

  return {
    connectionString,
    connectionStringFor,
    port,
    dir,
    sql: (text, values, db = database) => sql(text, values, db),
    stop: () => pgCtl('stop', ['-m', 'fast']),
    start: () => pgCtl('start', ['-l', log, '-o', serverOptions]),
    restart: () => pgCtl('restart', ['-m', 'fast', '-l', log, '-o', serverOptions]),
    async terminateConnections(db = database) {
      const rows = await sql<{ ended: boolean }>('SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db]);
      return rows.filter((row) => row.ended).length;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      process.off('exit', onExit);
      try {
        await pgCtl('stop', ['-m', 'immediate']);
      } catch {
        // Stopped already (a test stopped it).
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The tests of a suite on one throwaway cluster, each handed it. */
export type ClusterTests = Record<string, (ctx: { cluster: PostgresCluster }) => Promise<void>>;

/**
 * Registers each of `tests` on `test` with one throwaway cluster for them all (destroyed after),
 * or, without the server binaries, skips each after printing why.
 */
export async function testsOnCluster(test: uvu.Test<{ cluster: PostgresCluster }>, what: string, tests: ClusterTests): Promise<void> {
  const binaries = postgresBinaries();
  if ('missing' in binaries) {
    console.log(`skipped: ${what} — ${binaries.missing}`);
    for (const title of Object.keys(tests)) test.skip(title);
    return;
  }
  const cluster = await startCluster();
  test.before.each((ctx) => {
    ctx.cluster = cluster;
  });
  test.after(() => cluster.destroy());
  for (const [title, run] of Object.entries(tests)) test(title, run);
}
