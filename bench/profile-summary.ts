// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by file, top N, and
// the time of each stage of an admin request (a sample counts for the innermost stage on its stack).
//   npx tsx bench/profile-summary.ts <file.cpuprofile…> [top=25] [--per=<requests served>]
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
const topArg = args.find((a) => /^\d+$/.test(a));
const perArg = args.find((a) => a.startsWith('--per='));
const stageFlag = args.find((a) => a.startsWith('--stage='));
const file = args.filter((a) => a !== topArg && a !== perArg && a !== stageFlag).sort((a, b) => statSync(b).size - statSync(a).size)[0];
if (!file) {
  process.stderr.write('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(64);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
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
    .replace(/^.*\/work\/main\//, '');
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
 * undici as the platform lookup (node's own net and stream code is no stage of its own).
 */
const STAGES: Array<[stage: string, matches: (frame: ProfileNode['callFrame']) => boolean]> = [
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['log', (f) => /node_modules\/(pino|pino-std-serializers|sonic-boom|fast-redact)\//.test(f.url) || f.url.endsWith('/src/log.ts')],
  ['metrics', (f) => /node_modules\/prom-client\//.test(f.url) || f.url.endsWith('/src/metrics.ts')],
  ['validation', (f) => /node_modules\/valibot\//.test(f.url) || f.url.includes('/src/contract/')],
  ['auth', (f) => f.url.endsWith('/src/http/middleware/apiKey.ts') || f.url.endsWith('/src/services/apiKeys.ts')],
  ['platform lookup', (f) => /node_modules\/undici\//.test(f.url) || f.url.includes('/src/community/')],
  ['decide', (f) => f.url.includes('/src/domain/')],
  ['append', (f) => f.url.includes('/src/store/') || f.url.includes('node_modules/better-sqlite3/') || f.url.includes('node_modules/pg')],
  ['fold (read models)', (f) => f.url.includes('/src/projections/')],
  ['body read and parse', (f) => /node_modules\/(koa-body|co-body|raw-body|formidable)\//.test(f.url)],
  ['HTTP parse', (f) => f.url === 'node:_http_common' || (f.url === 'node:_http_server' && /parser|onIncoming|Headers/i.test(f.functionName))],
  ['answer', (f) => f.url === 'node:_http_outgoing' || (f.url.includes('node_modules/koa/') && f.functionName === 'respond')],
  ['koa and routing', (f) => /node_modules\/(koa|koa-compose|@koa\/router|koa-router)\//.test(f.url) || f.url.includes('/src/http/')],
  ['service, other', (f) => f.url.includes('/src/')],
];
const stageOf = new Map<number, string>();
for (const id of selfUs.keys()) {
  let stage = 'other (node, idle work)';
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const found = STAGES.find(([, matches]) => matches(byId.get(at!)!.callFrame));
    if (found) {
      stage = found[0];
      break;
    }
  }
  stageOf.set(id, stage);
}
const byStage = new Map<string, number>();
for (const [id, us] of selfUs) if (byId.get(id)!.callFrame.functionName !== '(idle)') byStage.set(stageOf.get(id)!, (byStage.get(stageOf.get(id)!) ?? 0) + us);
const busy = [...byStage.values()].reduce((a, b) => a + b, 0);
const per = perArg ? Number(perArg.slice('--per='.length)) : undefined;
process.stdout.write(`\nby stage of a request (busy time, idle left out${per ? `; µs per request over ${per} requests` : ''})\n`);
for (const [stage, us] of [...byStage].sort((a, b) => b[1] - a[1]))
  process.stdout.write(
    `${((100 * us) / busy).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms${per ? `  ${(us / per).toFixed(1).padStart(7)} µs` : ''}  ${stage}\n`,
  );
// --stage=<name>: what a stage's time is made of (self time by function within the stage).
const stageArg = args.find((a) => a.startsWith('--stage='));
if (stageArg) {
  const wanted = stageArg.slice('--stage='.length);
  const totals = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (stageOf.get(id) !== wanted) continue;
    const n = byId.get(id)!;
    const parent = byId.get(parentOf.get(id) ?? -1);
    const k = `${n.callFrame.functionName || '(anonymous)'}  ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}  ← ${parent ? `${parent.callFrame.functionName || '(anonymous)'} ${shortUrl(parent.callFrame.url)}` : ''}`;
    totals.set(k, (totals.get(k) ?? 0) + us);
  }
  print(`stage "${wanted}" by function (← its caller)`, [...totals].sort((a, b) => b[1] - a[1]).slice(0, top));
}
