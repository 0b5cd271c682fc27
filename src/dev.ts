// `npm run dev`: the service plus the community simulator on loopback, already wired, so every
// endpoint (and the sign-in flow) can be tried with no platform account. Not for production.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliOnStore } from './cliCommand.js';
import { DEMO_USERS } from './community/demoUsers.js';
import { createSimulator, SIMULATOR_KEY } from './community/simulator.js';
import { loadConfig } from './config.js';
import { createDemoServer } from './devDemo.js';
import { startService } from './main.js';
import { ApiKeyService } from './services/apiKeys.js';

const simulator = createSimulator({ users: DEMO_USERS });
const platform = await simulator.listen(Number(process.env.SIM_PORT ?? 8091), '127.0.0.1');
// A web page like a game's client, on an origin of its own (so CORS is exercised as in real use).
const demoPort = Number(process.env.DEMO_PORT ?? 8092);
const demoOrigin = `http://127.0.0.1:${demoPort}`;
const alice = DEMO_USERS[0]!;
const config = loadConfig({
  CORS_ORIGINS: demoOrigin,
  // The operator console, for the first demo user (sign in as them on the simulator).
  CONSOLE_ADMINS: alice.oId,
  // The console page reloads itself when a front-end file changes.
  CONSOLE_LIVE_RELOAD: 'true',
  ...process.env,
  DATA_DIR: process.env.DATA_DIR ?? './data/dev',
  COMMUNITY_URL: platform.url,
  COMMUNITY_KEY: SIMULATOR_KEY,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});
const service = await startService(config);
const demo = createDemoServer({ serviceUrl: service.url, communityName: config.community.name });
await new Promise<void>((resolve) => demo.listen(demoPort, '127.0.0.1', resolve));

// One all-permissions key for the dev store, kept next to it so restarts reuse it.
const keyFile = join(config.dataDir, 'dev-api-key.txt');
let apiKey: string;
if (existsSync(keyFile)) {
  apiKey = readFileSync(keyFile, 'utf8').trim();
} else {
  const { store, runner, readModels, clock } = service.deps;
  ({ key: apiKey } = await new ApiKeyService({ store, runner, keys: readModels.apiKeys, clock }).issue({ appId: 'dev', app: 'dev', permissions: ['*'], expires: null }));
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 });
}

process.stdout.write(`
community-bridge (dev) on ${service.url}, data in ${config.dataDir}
community platform simulator on ${platform.url}, users: ${DEMO_USERS.map((u) => `${u.userName} (${u.oId})`).join(', ')}

API key (all permissions): ${apiKey}
The operator CLI on this store: ${cliOnStore(config)} keys list
Demo web client (realtime + sign-in in the browser): ${demoOrigin}/
${config.console ? `Operator console: ${service.url}/console/ (operators: ${config.console.admins.join(', ')}; ${alice.userName} is ${alice.oId})` : 'Operator console: off (CONSOLE_ADMINS is empty)'}

Try:
  curl -s -X POST ${service.url}/adm/points/edit -H 'apiKey: ${apiKey}' -H 'Content-Type: application/json' \\
       -d '{"oId":"${alice.oId}","point":10,"memo":"welcome bonus"}'
  curl -s ${service.url}/adm/vip/${alice.oId} -H 'apiKey: ${apiKey}'
  curl -N ${service.url}/api/realtime        # then open ${service.url}/${config.community.name}/login?client_id=<client_id>

`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void Promise.all([service.close(), platform.close(), new Promise((r) => demo.close(r))]).then(() => process.exit(0)));
}
