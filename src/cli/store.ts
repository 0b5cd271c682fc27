// `cli store check` and `cli store backup <file>`: the embedded store's file, looked after while
// the service runs or not. An EventStoreDB server has its own tooling for both.
import type { Config } from '../config.js';
import { sqliteFiles } from '../core.js';
import { redactedConnectionString } from '../store/connectionString.js';
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
  if (action !== 'check' && action !== 'backup') throw new StoreUsageError(`Unknown store command "${action ?? ''}": store check | store backup <file> [--force]`);
  if (action === 'check' && target !== undefined) throw new StoreUsageError('store check takes no argument');
  if (action === 'backup' && (target === undefined || extra.length > 0)) throw new StoreUsageError('store backup takes one argument: the file to write');
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
