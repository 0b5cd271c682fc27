// Operator CLI (docs/architecture.md). Works on the configured store whether or not the server runs:
// appends made here reach a running server through the store's subscription.
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { AppError } from '../domain/errors.js';
import { ConfigError, loadConfig } from '../config.js';
import { describeStore, openCore, openStore, readModelOptions, StoreOpenError, webhookSecretBox, type CoreConfig } from '../core.js';
import { createReadModels } from '../projections/readModels.js';
import { ApiKeyService } from '../services/apiKeys.js';
import { systemClock } from '../system/clock.js';
import { AuditQueries } from '../projections/audit.js';
import { auditCommand } from './audit.js';
import { eventsCommand } from './events.js';
import { keysCommand } from './keys.js';
import { operationsCommand } from './operations.js';
import { OperationOutcomes } from '../services/operationOutcomes.js';
import { projectionsCommand, ReplayError } from './projections.js';
import { storeCommand, StoreUsageError } from './store.js';
import { WorkContext } from '../system/workContext.js';
import { WebhookService } from '../services/webhooks.js';
import { webhooksCommand } from './webhooks.js';

const USAGE = `Usage: npm run --silent cli -- <command>

  keys create --app-id <id> [--app <name>] --permissions <p1,p2|*> [--expires "YYYY-MM-DD HH:MM:SS"]
              [--all-apps] [--json]
                                     a key for an app: its exact id (a-z 0-9 _ . -), chosen with
                                     its first key (with --app, its name); --all-apps lets it read
                                     and resolve every app's records. --app <id> alone names the
                                     app by its id as well
  keys list [--json]
  keys disable <id> | keys enable <id> | keys revoke <id>
  audit points <oId> [--json]        every points edit with its outcome, oldest first
  audit medals <oId> [--json]        every medal give and removal with its outcome, oldest first
  audit items <oId> [--json]         every item edit with its outcome, oldest first
  audit vip <oId> [--json]           every VIP grant and renewal, oldest first
  events [--stream <name>] [--json]  the log, oldest first (NDJSON with --json); a name without
                                     "-" (user, vip, operation, apikey, ...) is a whole category
  projections rebuild [--json]       replay the whole log through every read model, report events/s
  operations list [--unknown|--conflicts] [--search <text>] [--json]
                                     platform operations without a known outcome, oldest first,
                                     with the caller's Idempotency-Key and X-Request-Id; --search:
                                     those whose key, request id or operation id holds <text>;
                                     --conflicts: resolved ones the platform answered afterwards
  operations resolve <id> --applied|--not-applied [--note <text>] [--by <name>] [--json]
                                     record what the platform shows for an unknown outcome
  webhooks list [--app-id <id>] [--json]
  webhooks add --app-id <id> --url <url> --events <t1,t2> [--description <text>] [--json]
                                     an app's endpoint for signed events (client.signed_in,
                                     client.disconnected, message.delivered,
                                     operation.outcome_known, operation.outcome_unknown,
                                     operation.resolved); prints its signing secret, once
  webhooks remove <id> | webhooks disable <id> | webhooks enable <id> | webhooks rotate <id>
  webhooks attempts <id> [--limit <n>] [--json]
                                     the endpoint's latest attempts, newest first
  webhooks resend <id> <eventId>     send an event to the endpoint again now
  store check                        look for damage: the SQLite file, or PostgreSQL's schema
                                     version and position sequence; prints "ok" (exit 0) or the
                                     problems (exit 1)
  store backup <file> [--force]      a consistent copy of the SQLite store, also while the service
                                     runs; --force replaces an existing <file> (PostgreSQL: use
                                     pg_dump, exit 2)
  store migrate                      bring PostgreSQL's schema to this build's version (a node does
                                     it when it starts); exit 2 on other stores

The store is the one the service uses (DATA_DIR, or EVENTSTORE_CONNECTION_STRING); --data-dir <dir>
overrides DATA_DIR. Every command names the store it used on stderr. A SQLite log that lost events
since its last run (an older copy put back) is refused unless --accept-log-loss is given.`;

export class UsageError extends Error {}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      app: { type: 'string' },
      'app-id': { type: 'string' },
      'all-apps': { type: 'boolean', default: false },
      permissions: { type: 'string' },
      expires: { type: 'string' },
      stream: { type: 'string' },
      json: { type: 'boolean', default: false },
      unknown: { type: 'boolean', default: false },
      conflicts: { type: 'boolean', default: false },
      search: { type: 'string' },
      applied: { type: 'boolean', default: false },
      'not-applied': { type: 'boolean', default: false },
      note: { type: 'string' },
      by: { type: 'string' },
      'data-dir': { type: 'string' },
      force: { type: 'boolean', default: false },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      limit: { type: 'string' },
      'accept-log-loss': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [area, ...rest] = positionals;
  if (values.help || !area) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!['keys', 'audit', 'events', 'projections', 'operations', 'store', 'webhooks'].includes(area)) throw new UsageError(`Unknown command "${area}"`);
  const dataDir = values['data-dir'];
  const config: CoreConfig = {
    ...loadConfig(dataDir === undefined ? process.env : { ...process.env, DATA_DIR: dataDir }),
    acceptLogLoss: values['accept-log-loss'],
  };
  process.stderr.write(`Store: ${describeStore(config)}\n`);
  const print = (text: string) => void process.stdout.write(text);
  if (area === 'store') {
    process.exitCode = await storeCommand(config, rest, values, { out: print, err: (text) => void process.stderr.write(text) });
    return;
  }
  if (area === 'events' || area === 'projections') {
    const store = await openStore(config);
    try {
      if (area === 'events') {
        await eventsCommand(store, values, write);
      } else {
        const output = { out: print, err: (text: string) => void process.stderr.write(text), tty: process.stderr.isTTY === true };
        await projectionsCommand(store, () => createReadModels(systemClock, readModelOptions(config)), rest, values, output);
      }
    } finally {
      await store.close();
    }
    return;
  }
  const core = await openCore(config);
  // What the commands append names the OS user as the operator, and no request or node.
  const work = WorkContext.unattributed.asOperator(osUser());
  try {
    if (area === 'audit') {
      await auditCommand(new AuditQueries({ ...core.readModels, store: core.store }), rest, values, print);
    } else if (area === 'operations') {
      const { store, runner, readModels, clock } = core;
      const outcomes = new OperationOutcomes({ store, runner, operations: readModels.operations, clock });
      await operationsCommand({ store, operations: readModels.operations, outcomes, work }, rest, values, print);
    } else if (area === 'webhooks') {
      const { store, runner, readModels, clock } = core;
      const webhooks = new WebhookService({ store, runner, webhooks: readModels.webhooks, clock, box: webhookSecretBox(config), settings: config.webhooks });
      const pendingCount = (endpointId: string) => readModels.webhooks.pendingCount(endpointId);
      await webhooksCommand({ webhooks, keys: readModels.apiKeys, pendingCount, clock, work }, rest, values, print);
    } else {
      const service = new ApiKeyService({ store: core.store, runner: core.runner, keys: core.readModels.apiKeys, clock: core.clock });
      await keysCommand(service, work, rest, values, print);
    }
  } finally {
    await core.runner.stop();
    await core.store.close();
  }
}

/** stdout with backpressure; a reader that went away (`| head`) ends the command quietly. */
function write(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once('drain', resolve);
  });
}
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

/** Who runs the CLI: the events its commands append name the OS user as their operator. */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown operator';
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof StoreUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    process.exit(64);
  }
  if (error instanceof AppError || error instanceof ConfigError || error instanceof ReplayError || error instanceof StoreOpenError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`Unexpected failure: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(70);
});
