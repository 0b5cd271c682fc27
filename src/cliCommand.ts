// How an operator runs the CLI next to this process, for the lines that tell them to: the
// compiled file beside this one where the service runs compiled (the container image has neither
// tsx nor the sources), the npm script otherwise; with the store setting the service itself got.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.js';
import { redactedConnectionString } from './store/connectionString.js';

const shellQuote = (text: string) => (/^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);

/** Run by tsx from src/ (npm start, npm run dev), not from the compiled dist/. */
export const FROM_SOURCES = import.meta.url.endsWith('.ts');

/** The command that runs the operator CLI from the current directory. */
export const CLI_COMMAND = FROM_SOURCES ? 'npm run --silent cli --' : `node ${shellQuote(relative(process.cwd(), fileURLToPath(new URL('./cli/main.js', import.meta.url))))}`;

/**
 * The CLI command with the setting that reaches this configuration's store, as the service got
 * it: the file a connection string was read from, or the string itself. A string that holds a
 * password is printed with `***` in its place (see `passwordLeftOut`).
 */
export function cliOnStore(config: Config): string {
  const connectionString = config.eventStoreConnectionString;
  if (!connectionString) return `DATA_DIR=${shellQuote(config.dataDir)} ${CLI_COMMAND}`;
  if (config.eventStoreConnectionStringFile) return `EVENTSTORE_CONNECTION_STRING_FILE=${shellQuote(config.eventStoreConnectionStringFile)} ${CLI_COMMAND}`;
  return `EVENTSTORE_CONNECTION_STRING=${shellQuote(redactedConnectionString(connectionString))} ${CLI_COMMAND}`;
}

/** Whether `cliOnStore` left a password out of the command (the operator puts it back). */
export function passwordLeftOut(config: Config): boolean {
  const connectionString = config.eventStoreConnectionString;
  return !!connectionString && !config.eventStoreConnectionStringFile && redactedConnectionString(connectionString) !== connectionString;
}
