// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by file, top N.
//   npx tsx bench/profile-summary.ts <file.cpuprofile…> [top=25]
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
const file = args.filter((a) => a !== topArg).sort((a, b) => statSync(b).size - statSync(a).size)[0];
if (!file) {
  process.stderr.write('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(64);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
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
