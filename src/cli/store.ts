// `cli store check`, `cli store backup <file>` and `cli store migrate`, while the service runs or
// not. On the embedded store: its file checked and copied. On PostgreSQL: the schema and the
// position sequence checked, the schema migrated; a backup is pg_dump's. An EventStoreDB server
// has its own tooling for all of them.
import type { Config } from '../config.js';
import { sqliteFiles } from '../core.js';
import { redactedConnectionString, storeKindOf } from '../store/connectionString.js';
import { backupSqliteStore } from '../store/sqliteBackup.js';
import { checkSqliteStore } from '../store/sqliteCheck.js';

/** A store command given wrongly: the CLI prints the usage with it. */
export class StoreUsageError extends Error {}

export interface StoreOutput {
  out(text: string): void;
  err(text: string): void;
}

/** Progress lines are written at most this often. */
const PROGRESS_EVERY_MS = 1000;

/** Runs the command and answers its exit code: 0 done, 1 damage found or refused, 2 not for this store. */
export async function storeCommand(config: Config, args: string[], values: { force?: boolean }, output: StoreOutput): Promise<number> {
  const [action, target, ...extra] = args;
  if (action !== 'check' && action !== 'backup' && action !== 'migrate') {
    throw new StoreUsageError(`Unknown store command "${action ?? ''}": store check | store backup <file> [--force] | store migrate`);
  }
  if ((action === 'check' || action === 'migrate') && target !== undefined) throw new StoreUsageError(`store ${action} takes no argument`);
  if (action === 'backup' && (target === undefined || extra.length > 0)) throw new StoreUsageError('store backup takes one argument: the file to write');
  const connectionString = config.eventStoreConnectionString;
  if (connectionString && storeKindOf(connectionString) === 'postgresql') return postgresCommand(connectionString, action, output);
  if (action === 'migrate') {
    const store = connectionString
      ? `EventStoreDB at ${redactedConnectionString(connectionString)} has`
      : `the SQLite file ${sqliteFiles(config.dataDir).database} makes its tables when it opens and has`;
    output.err(`store migrate applies to PostgreSQL; ${store} no schema to migrate\n`);
    return 2;
  }
  if (config.eventStoreConnectionString) {
    output.err(
      `store ${action} applies to the embedded SQLite store; EventStoreDB at ${redactedConnectionString(config.eventStoreConnectionString)} is checked and backed up with the server's own tooling\n`,
    );
    return 2;
  }
  const { database, marker } = sqliteFiles(config.dataDir);
  if (action === 'check') {
    const problems = checkSqliteStore(database, marker);
    if (problems.length === 0) {
      output.out('ok\n');
      return 0;
    }
    for (const problem of problems) output.out(`${database}: ${problem}\n`);
    return 1;
  }
  let lastReport = Date.now();
  try {
    const result = await backupSqliteStore(database, target!, {
      force: values.force === true,
      onProgress: ({ copiedPages, totalPages }) => {
        if (Date.now() - lastReport < PROGRESS_EVERY_MS || copiedPages === totalPages) return;
        lastReport = Date.now();
        output.err(`Backing up: ${Math.floor((copiedPages / totalPages) * 100)}% (${copiedPages} of ${totalPages} pages)\n`);
      },
    });
    output.out(`Backed up ${database} to ${result.file}: ${result.bytes} bytes, up to log position ${result.head}\n`);
    return 0;
  } catch (error) {
    // A refusal, or what SQLite said (a full disk, a damaged source): one line either way.
    output.err(`Cannot back up ${database}: ${(error as Error).message}\n`);
    return 1;
  }
}

/** The same commands on PostgreSQL. */
async function postgresCommand(connectionString: string, action: 'check' | 'backup' | 'migrate', output: StoreOutput): Promise<number> {
  const server = `PostgreSQL at ${redactedConnectionString(connectionString)}`;
  // Loaded only when used, as openStore loads the adapter.
  const { checkPostgresStore, migratePostgresStore } = await import('../store/postgresCheck.js');
  if (action === 'backup') {
    output.err(`store backup copies the embedded SQLite store; back up ${server} with pg_dump (e.g. pg_dump --format=custom --file=<file> <database>)\n`);
    return 2;
  }
  if (action === 'check') {
    const problems = await checkPostgresStore(connectionString);
    if (problems.length === 0) {
      output.out('ok\n');
      return 0;
    }
    for (const problem of problems) output.out(`${server}: ${problem}\n`);
    return 1;
  }
  try {
    const { from, to } = await migratePostgresStore(connectionString);
    output.out(from === to ? `${server}: the schema is at version ${to} already\n` : `${server}: migrated the schema from version ${from} to ${to}\n`);
    return 0;
  } catch (error) {
    output.err(`Cannot migrate ${server}: ${(error as Error).message}\n`);
    return 1;
  }
}
