// The service as the bench runs it: `startService` with the environment it is given (PORT=0,
// DATA_DIR, COMMUNITY_URL, …), plus one all-permissions API key issued through the service's
// own key service, as `npm run dev` does, and one more for each app named in BENCH_MORE_APPS
// (comma-separated). Prints `READY {"url","apiKey","keys":{app: key}}`. The service is the
// compiled one when the bench built it (bench/lib/build.ts), else the sources.
import { serviceModule } from './lib/build.js';

// tsx, which loads this file, turns source maps on for the whole process; the compiled service as
// deployed (`node dist/main.js`) runs without them, so an error's stack (Node makes one for every
// reset connection) is not mapped back to the sources there either.
if (process.env.BENCH_SERVICE_BUILD) process.setSourceMapsEnabled(false);

const { loadConfig } = (await import(serviceModule('config.js'))) as typeof import('../src/config.js');
const { startService } = (await import(serviceModule('main.js'))) as typeof import('../src/main.js');
const { ApiKeyService } = (await import(serviceModule('services/apiKeys.js'))) as typeof import('../src/services/apiKeys.js');
const { WorkContext } = (await import(serviceModule('system/workContext.js'))) as typeof import('../src/system/workContext.js');

const config = loadConfig({ PORT: '0', LOG_LEVEL: 'warn', ...process.env });
const service = await startService(config);
const { store, runner, readModels, clock } = service.deps;
const keyService = new ApiKeyService({ store, runner, keys: readModels.apiKeys, clock });
const { key } = await keyService.issue(WorkContext.unattributed, { app: 'bench', permissions: ['*'], expires: null });
const keys: Record<string, string> = {};
for (const app of (process.env.BENCH_MORE_APPS ?? '').split(',').filter(Boolean))
  keys[app] = (await keyService.issue(WorkContext.unattributed, { app, permissions: ['*'], expires: null })).key;
process.stdout.write(`READY ${JSON.stringify({ url: service.url, apiKey: key, keys, pid: process.pid })}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void service.close().then(() => process.exit(0)));
}
