// How an operator runs the CLI next to this process, for the lines that tell them to: the
// compiled file beside this one where the service runs compiled (the container image has neither
// tsx nor the sources), the npm script otherwise.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.js';

const shellQuote = (text: string) => (/^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);

/** Run by tsx from src/ (npm start, npm run dev), not from the compiled dist/. */
export const FROM_SOURCES = import.meta.url.endsWith('.ts');

/** The command that runs the operator CLI from the current directory. */
export const CLI_COMMAND = FROM_SOURCES ? 'npm run --silent cli --' : `node ${shellQuote(relative(process.cwd(), fileURLToPath(new URL('./cli/main.js', import.meta.url))))}`;

/**
 * The CLI command with the setting it needs to reach this configuration's store. An EventStoreDB
 * connection string is left out: it may hold a password, and whoever runs the service has it.
 */
export function cliOnStore(config: Config): string {
  return config.eventStoreConnectionString ? CLI_COMMAND : `DATA_DIR=${shellQuote(config.dataDir)} ${CLI_COMMAND}`;
}
