// `npm run dev`: the service plus the community simulator on loopback, already wired, so every
// endpoint (and the sign-in flow) can be tried with no platform account. Not for production.
// Ports: PORT (the service), SIM_PORT (the simulator, and its fault control at /_faults),
// DEMO_PORT (the demo page); one that cannot be opened is told as the variable to change.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { cliOnStore } from './cliCommand.js';
import { DEMO_USERS } from './community/demoUsers.js';
import { createSimulator, FAULT_CONTROL_PATH, SIMULATOR_KEY, type RunningSimulator } from './community/simulator.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { StoreOpenError } from './core.js';
import { createDemoServer } from './devDemo.js';
import { loadDevPorts, portProblem, type DevPorts } from './devPorts.js';
import { startService, type RunningService } from './main.js';
import { WorkContext } from './system/workContext.js';
import { ApiKeyService } from './services/apiKeys.js';

const SIM_HOST = '127.0.0.1';
/** How long a failed start may take to close what it had opened before it exits anyway. */
const CLOSE_TIMEOUT_MS = 5000;

const alice = DEMO_USERS[0]!;
let ports: DevPorts;
let config: Config;
try {
  ports = loadDevPorts();
  // A web page like a game's client, on an origin of its own (so CORS is exercised as in real use).
  const demoOrigin = `http://127.0.0.1:${ports.demo}`;
  // Checked before anything listens; COMMUNITY_URL is the simulator's, set once it listens.
  config = loadConfig({
    CORS_ORIGINS: demoOrigin,
    // The operator console, for the first demo user (sign in as them on the simulator).
    CONSOLE_ADMINS: alice.oId,
    // The console page reloads itself when a front-end file changes.
    CONSOLE_LIVE_RELOAD: 'true',
    ...process.env,
    DATA_DIR: process.env.DATA_DIR || './data/dev',
    COMMUNITY_URL: `http://${SIM_HOST}`,
    COMMUNITY_KEY: SIMULATOR_KEY,
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
  });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const demoOrigin = `http://127.0.0.1:${ports.demo}`;

let platform: RunningSimulator | undefined;
let service: RunningService | undefined;
let demo: Server | undefined;
const closeAll = () => Promise.all([service?.close(), platform?.close(), demo && new Promise((resolve) => demo!.close(resolve))]);

/** What the operator has to fix, in one line; whatever started is closed first. */
async function fail(line: string): Promise<never> {
  process.stderr.write(`${line}\n`);
  setTimeout(() => process.exit(1), CLOSE_TIMEOUT_MS).unref();
  await closeAll().catch(() => undefined);
  process.exit(1);
}

/** Runs a start step; a port or store problem ends the process with its one line. */
async function starting<T>(step: () => Promise<T>, port: number, variable: string): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const problem = portProblem(error, port, variable) ?? (error instanceof StoreOpenError ? error.message : undefined);
    if (problem) return fail(problem);
    throw error;
  }
}

const simulator = createSimulator({ users: DEMO_USERS, faultControl: true });
platform = await starting(() => simulator.listen(ports.simulator, SIM_HOST), ports.simulator, 'SIM_PORT');
config = { ...config, community: { ...config.community, url: platform.url } };
service = await starting(() => startService(config), config.port, 'PORT');
const serviceUrl = service.url;
demo = createDemoServer({ serviceUrl, communityName: config.community.name });
await starting(
  () =>
    new Promise<void>((resolve, reject) => {
      demo!.once('error', reject);
      demo!.listen(ports.demo, '127.0.0.1', resolve);
    }),
  ports.demo,
  'DEMO_PORT',
);

// One all-permissions key for the dev store, kept next to it so restarts reuse it.
const keyFile = join(config.dataDir, 'dev-api-key.txt');
let apiKey: string;
if (existsSync(keyFile)) {
  apiKey = readFileSync(keyFile, 'utf8').trim();
} else {
  const { store, runner, readModels, clock } = service.deps;
  ({ key: apiKey } = await new ApiKeyService({ store, runner, keys: readModels.apiKeys, clock }).issue(WorkContext.unattributed, {
    appId: 'dev',
    app: 'dev',
    permissions: ['*'],
    expires: null,
  }));
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 });
}

process.stdout.write(`
community-bridge (dev) on ${serviceUrl}, data in ${config.dataDir}
community platform simulator on ${platform.url}, users: ${DEMO_USERS.map((u) => `${u.userName} (${u.oId})`).join(', ')}

API key (all permissions): ${apiKey}
The operator CLI on this store: ${cliOnStore(config)} keys list
Demo web client (realtime + sign-in in the browser): ${demoOrigin}/
${config.console ? `Operator console: ${serviceUrl}/console/ (operators: ${config.console.admins.join(', ')}; ${alice.userName} is ${alice.oId})` : 'Operator console: off (CONSOLE_ADMINS is empty)'}
Platform faults (README, "Trying it in dev"): ${platform.url}${FAULT_CONTROL_PATH}

Try:
  curl -s -X POST ${serviceUrl}/adm/points/edit -H 'apiKey: ${apiKey}' -H 'Content-Type: application/json' \\
       -d '{"oId":"${alice.oId}","point":10,"memo":"welcome bonus"}'
  curl -s ${serviceUrl}/adm/vip/${alice.oId} -H 'apiKey: ${apiKey}'
  curl -N ${serviceUrl}/api/realtime        # then open ${serviceUrl}/${config.community.name}/login?client_id=<client_id>
  curl -s -X POST ${platform.url}${FAULT_CONTROL_PATH} -d '{"path":"/user/edit/points","mode":"apply-then-hang"}'   # the next points edit: applied, unanswered

`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void closeAll().then(() => process.exit(0)));
}
