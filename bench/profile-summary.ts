// Summarises a V8 .cpuprofile (node --cpu-prof, or the bench's profile of a measured run): self
// time by function and by file, top N, and the time of each stage of an admin request (a sample
// counts for the innermost stage on its stack).
//   npx tsx bench/profile-summary.ts <file.cpuprofile…> [top=25] [--per=<requests served>]
//     [--cpu=<CPU seconds of the profiled thread>] [--stage=<stage>]
// A profile samples wall time: a thread that waits for a core (a loaded machine) is sampled where
// it stopped. With --cpu (the bench prints the main thread's CPU over the profiled run), the busy
// time is scaled to that CPU, so a stage's figure is CPU per request, comparable across runs.
// --stage lists what one stage's time is made of.
import { readFileSync, statSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

// Several files (a glob that also caught a worker thread's profile): the largest is summarised.
const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const topArg = args.find((a) => /^\d+$/.test(a));
const file = args.filter((a) => a !== topArg && !a.startsWith('--')).sort((a, b) => statSync(b).size - statSync(a).size)[0];
if (!file) {
  process.stderr.write('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top] [--per=<requests>] [--cpu=<seconds>] [--stage=<stage>]\n');
  process.exit(64);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
// The compiled service (bench/lib/build.ts) is summarised by its sources' paths, as the stages match them.
for (const n of profile.nodes) n.callFrame.url = n.callFrame.url.replace(/\/\.bench-tmp\/build-[^/]+\/dist\/(.*)\.js$/, '/src/$1.ts');
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
const selfUs = new Map<number, number>();
for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'nm:')
    .replace(`${process.cwd()}/`, '');
const sum = (key: (n: ProfileNode) => string) => {
  const totals = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const k = key(byId.get(id)!);
    totals.set(k, (totals.get(k) ?? 0) + us);
  }
  return [...totals].sort((a, b) => b[1] - a[1]).slice(0, top);
};
const print = (title: string, rows: Array<[string, number]>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, us] of rows) process.stdout.write(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`);
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(2)} s sampled\n`);
print(
  'self time by function',
  sum((n) => `${n.callFrame.functionName || '(anonymous)'}  ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`),
);
print(
  'self time by file',
  sum((n) => shortUrl(n.callFrame.url) || `(${n.callFrame.functionName})`),
);
// Inclusive-ish view by package: everything under one node_modules package summed.
print(
  'self time by package',
  sum((n) => {
    const url = n.callFrame.url;
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    return m ? m[1]! : url.includes('/src/') ? 'src (service)' : url.startsWith('node:') ? 'node core' : url ? url : `(${n.callFrame.functionName})`;
  }),
);

/**
 * The stages of one admin request, by where the code lives. The innermost match on a sample's
 * stack wins: valibot called from the API-key check counts as validation, a socket write under
 * undici as the platform lookup (node's own net and stream code is no stage of its own). A match
 * may defer to the frames around it: domain code is the decision under the command handler, the
 * read models' work under a read model, and formatting an answer's timestamps is the answer.
 */
type Frame = ProfileNode['callFrame'];
const ASYNC_CONTEXT = new Set([
  'promiseInitHook',
  'promiseBeforeHook',
  'promiseAfterHook',
  'promiseResolveHook',
  'trackPromise',
  '_propagate',
  'lookupPublicResource',
  'executionAsyncResource',
  'emitInitNative',
  'getStore',
  'enterWith',
  'run',
]);
const ANSWER_SERVER = /^(writeHead|_implicitHeader|resOnFinish|detachSocket|onServerResponseClose|ServerResponse|assignSocket|_finish|setHeader)/;
const STAGES: Array<[stage: string, matches: (frame: Frame) => boolean]> = [
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  [
    'log',
    (f) =>
      /node_modules\/(pino|pino-std-serializers|sonic-boom|fast-redact)\//.test(f.url) || f.url.endsWith('/src/log.ts') || f.url.endsWith('/src/http/middleware/requestLog.ts'),
  ],
  ['metrics', (f) => /node_modules\/prom-client\//.test(f.url) || f.url.endsWith('/src/metrics.ts')],
  // The request's work context, and async hooks (AsyncLocalStorage's on every promise), should anything install them.
  [
    'request context',
    (f) => f.url.endsWith('/src/system/workContext.ts') || ((f.url === 'node:async_hooks' || f.url === 'node:internal/async_hooks') && ASYNC_CONTEXT.has(f.functionName)),
  ],
  ['validation', (f) => /node_modules\/valibot\//.test(f.url) || f.url.includes('/src/contract/') || f.url.endsWith('/src/http/validation.ts')],
  ['auth', (f) => f.url.endsWith('/src/http/middleware/apiKey.ts') || f.url.endsWith('/src/services/apiKeys.ts') || f.url.endsWith('/src/domain/permissions.ts')],
  [
    'platform lookup',
    (f) => /node_modules\/undici\//.test(f.url) || f.url.startsWith('wasm://') || f.url.includes('/src/community/') || f.url.endsWith('/src/services/userSync.ts'),
  ],
  ['answer', (f) => f.url.endsWith('/src/domain/time.ts')],
  ['decide', (f) => f.url.includes('/src/domain/') || f.url.endsWith('/src/services/commandHandler.ts')],
  ['append', (f) => f.url.includes('/src/store/') || f.url.includes('node_modules/better-sqlite3/') || f.url.includes('node_modules/pg')],
  ['read models', (f) => f.url.includes('/src/projections/')],
  [
    'body read and parse',
    (f) =>
      /node_modules\/(koa-body|co-body|raw-body|inflation|@hapi\/bourne|type-is|media-typer)\//.test(f.url) || /\/src\/http\/middleware\/(jsonBody|bodyDepth)\.ts$/.test(f.url),
  ],
  [
    'answer',
    (f) =>
      f.url === 'node:_http_outgoing' ||
      (f.url === 'node:_http_server' && ANSWER_SERVER.test(f.functionName)) ||
      /node_modules\/(on-finished|ee-first)\//.test(f.url) ||
      (f.url.includes('node_modules/koa/') && f.functionName === 'respond'),
  ],
  ['HTTP parse', (f) => f.url === 'node:_http_common' || f.url === 'node:_http_incoming' || f.url === 'node:_http_server'],
  [
    'koa and routing',
    (f) => /node_modules\/(koa|koa-compose|@koa\/router|koa-router|delegates|statuses|vary|accepts|cookies|http-errors)\//.test(f.url) || f.url.includes('/src/http/'),
  ],
  ['service, other', (f) => f.url.includes('/src/')],
];
/** Stages whose frames defer to what called them, where the caller says more. */
const REFINED: Record<string, Array<[stage: string, matches: (frame: Frame) => boolean]>> = {
  decide: [
    ['decide', (f) => f.url.endsWith('/src/services/commandHandler.ts')],
    ['read models', (f) => f.url.includes('/src/projections/')],
  ],
};
const stageOf = new Map<number, string>();
for (const id of selfUs.keys()) {
  let stage = 'node runtime (event loop, streams, microtasks)';
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const found = STAGES.find(([, matches]) => matches(byId.get(at!)!.callFrame));
    if (!found) continue;
    stage = found[0];
    const refinements = REFINED[stage];
    if (refinements) {
      for (let up = parentOf.get(at); up !== undefined; up = parentOf.get(up)) {
        const refined = refinements.find(([, matches]) => matches(byId.get(up!)!.callFrame));
        if (refined) {
          stage = refined[0];
          break;
        }
      }
    }
    break;
  }
  if (byId.get(id)!.callFrame.functionName === '(program)') stage = 'native, not attributed by V8 ((program))';
  stageOf.set(id, stage);
}
const byStage = new Map<string, number>();
for (const [id, us] of selfUs) if (byId.get(id)!.callFrame.functionName !== '(idle)') byStage.set(stageOf.get(id)!, (byStage.get(stageOf.get(id)!) ?? 0) + us);
const busy = [...byStage.values()].reduce((a, b) => a + b, 0);
const per = option('per') === undefined ? undefined : Number(option('per'));
const cpuUs = option('cpu') === undefined ? undefined : Number(option('cpu')) * 1e6;
// Scaled to the thread's CPU when it is known: the busy samples' shares of what it really used.
const scale = cpuUs === undefined ? 1 : cpuUs / busy;
process.stdout.write(
  `\nby stage of a request (busy time, idle left out${cpuUs === undefined ? '' : `; ${(busy / 1e6).toFixed(2)} s busy in the samples, scaled to the ${(cpuUs / 1e6).toFixed(2)} s of CPU the thread used`}` +
    `${per ? `; µs ${cpuUs === undefined ? '(wall, busy)' : 'of CPU'} per request over ${per} requests` : ''})\n`,
);
for (const [stage, us] of [...byStage].sort((a, b) => b[1] - a[1]))
  process.stdout.write(
    `${((100 * us) / busy).toFixed(1).padStart(5)}%  ${((us * scale) / 1000).toFixed(0).padStart(7)} ms${per ? `  ${((us * scale) / per).toFixed(1).padStart(7)} µs` : ''}  ${stage}\n`,
  );
if (per) process.stdout.write(`        ${''.padStart(10)}${((busy * scale) / per).toFixed(1).padStart(7)} µs  in all\n`);

// --stage=<name>: what a stage's time is made of (self time by function within the stage).
const wanted = option('stage');
if (wanted !== undefined) {
  const totals = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (stageOf.get(id) !== wanted || byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const n = byId.get(id)!;
    const parent = byId.get(parentOf.get(id) ?? -1);
    const k = `${n.callFrame.functionName || '(anonymous)'}  ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}  ← ${parent ? `${parent.callFrame.functionName || '(anonymous)'} ${shortUrl(parent.callFrame.url)}` : ''}`;
    totals.set(k, (totals.get(k) ?? 0) + us);
  }
  print(`stage "${wanted}" by function (← its caller)`, [...totals].sort((a, b) => b[1] - a[1]).slice(0, top));
}
