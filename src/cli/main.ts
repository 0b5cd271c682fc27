// Operator CLI (design.md §5). Works on the configured store whether or not the server runs:
// appends made here reach a running server through the store's subscription.
import { parseArgs } from 'node:util';
import { AppError } from '../domain/errors.js';
import { ConfigError, loadConfig } from '../config.js';
import { openCore } from '../main.js';
import { ApiKeyService } from '../services/apiKeys.js';
import { keysCommand } from './keys.js';

const USAGE = `Usage: npm run --silent cli -- <command>

  keys create --app <name> --permissions <p1,p2|*> [--expires "YYYY-MM-DD HH:MM:SS"] [--json]
  keys list [--json]
  keys disable <id> | keys enable <id> | keys revoke <id>

The store is the one the service uses (DATA_DIR, or EVENTSTORE_CONNECTION_STRING).`;

export class UsageError extends Error {}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      app: { type: 'string' },
      permissions: { type: 'string' },
      expires: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [area, ...rest] = positionals;
  if (values.help || !area) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (area !== 'keys') throw new UsageError(`Unknown command "${area}"`);
  const core = await openCore(loadConfig());
  try {
    const service = new ApiKeyService({ store: core.store, runner: core.runner, keys: core.readModels.apiKeys, clock: core.clock });
    await keysCommand(service, rest, values, (text) => process.stdout.write(text));
  } finally {
    await core.runner.stop();
    await core.store.close();
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    process.exit(64);
  }
  if (error instanceof AppError || error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`Unexpected failure: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(70);
});
