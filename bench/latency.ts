// Latency load generator (its own process): `connections` keep-alive connections, each sending
// one request at a time, for `durationS`. With `rate` > 0 the requests are paced (the whole
// generator sends `rate` per second, spread evenly over the connections); with 0 every
// connection sends again as soon as its answer arrives (closed loop, i.e. saturation).
// Latencies are timed with process.hrtime (autocannon rounds to whole milliseconds).
// Argument: JSON {url, workload, users, apiKey?, keyPrefix?, clientId?, connections, durationS, rate, warmupS?, windowS?, announce?, localAddresses?,
// targets?, timeoutS?, recipients?}.
// With `targets` ([{url, apiKey?, label?}], e.g. the nodes of one deployment) connection c sends
// to target c mod their number, the requests still round-robin over the users from one counter,
// and `byLabel` holds the measured figures of the targets sharing each label, merged.
// With `timeoutS` a request unanswered after that long is given up and counted as an error.
// With `localAddresses` the connections are spread over those source addresses (loopback ones:
// 127.0.0.0/8 is all this host's), as a flood from many clients would be.
// With `announce`, a first `RESULT {"warmedUp":true}` says the warm-up is over (the parent may
// start what is to run alongside the measured run).
// With `windowS` the measured run is also cut into consecutive windows of that length (by when
// each answer arrived), each with its own figures in `windows`, and `startedAt` (ms since the
// epoch) says when the first window began: a long run's drift, without gaps between windows.
import { Agent, request } from 'node:http';
import { workload, type WorkloadName } from './lib/workloads.js';

interface LatencyArgs {
  url: string;
  workload: WorkloadName;
  users: number;
  apiKey?: string;
  keyPrefix?: string;
  clientId?: string;
  connections: number;
  durationS: number;
  rate: number;
  warmupS?: number;
  windowS?: number;
  announce?: boolean;
  localAddresses?: string[];
  targets?: Array<{ url: string; apiKey?: string; label?: string }>;
  timeoutS?: number;
  recipients?: number;
}

const args = JSON.parse(process.argv[2]!) as LatencyArgs;
const targets = (args.targets?.length ? args.targets : [{ url: args.url, apiKey: args.apiKey }]).map((t) => ({
  w: workload(args.workload, { ...args, apiKey: t.apiKey }),
  url: new URL(t.url),
  agent: new Agent({ keepAlive: true, maxSockets: args.connections }),
  label: 'label' in t ? t.label : undefined,
}));
let counter = 0;

/** An answer's time, and whether it was the workload's refusal by design. */
function send(connection: number, localAddress: string | undefined): Promise<{ ms: number; refused: boolean }> {
  const { w, url: target, agent } = targets[connection % targets.length]!;
  const { path, body, headers } = w.request(counter++);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        method: w.method,
        path,
        agent,
        ...(localAddress && { localAddress }),
        headers: { ...w.headers, ...headers, ...(body && { 'content-length': Buffer.byteLength(body) }) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          if (res.statusCode === (w.status ?? 200)) resolve({ ms, refused: false });
          else if (w.refusedStatus !== undefined && res.statusCode === w.refusedStatus) resolve({ ms, refused: true });
          else reject(new Error(`HTTP ${res.statusCode} for ${path}`));
        });
      },
    );
    req.on('error', reject);
    if (args.timeoutS) req.setTimeout(args.timeoutS * 1000, () => req.destroy(new Error(`no answer in ${args.timeoutS} s for ${path}`)));
    req.end(body);
  });
}

interface Window {
  latencies: number[];
  errors: number;
  refused: number;
}

/** The measured phase's figures per target label. */
const byLabel = new Map<string, Window>();
let measuring = false;
const labelled = (connection: number) => {
  const label = targets[connection % targets.length]!.label;
  if (!measuring || label === undefined) return undefined;
  if (!byLabel.has(label)) byLabel.set(label, { latencies: [], errors: 0, refused: 0 });
  return byLabel.get(label)!;
};

async function phase(seconds: number, windowS = seconds): Promise<{ windows: Window[]; elapsedS: number; startedAt: number }> {
  const windows: Window[] = Array.from({ length: Math.max(1, Math.ceil(seconds / windowS - 1e-9)) }, () => ({ latencies: [], errors: 0, refused: 0 }));
  const start = performance.now();
  const end = start + seconds * 1000;
  const windowOf = () => windows[Math.min(windows.length - 1, Math.floor((performance.now() - start) / (windowS * 1000)))]!;
  const interval = args.rate > 0 ? (1000 * args.connections) / args.rate : 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: args.connections }, async (_, c) => {
      // Paced connections start staggered so the sends spread over the interval.
      let next = start + (interval * c) / args.connections;
      for (;;) {
        if (interval > 0) {
          // A paced connection sends nothing past the end, so the run lasts what was asked.
          if (next >= end) return;
          const wait = next - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          next += interval;
        }
        if (performance.now() >= end) return;
        const label = labelled(c);
        try {
          const { ms, refused } = await send(c, args.localAddresses?.[c % args.localAddresses.length]);
          windowOf().latencies.push(ms);
          label?.latencies.push(ms);
          if (refused) windowOf().refused++;
          if (refused && label) label.refused++;
        } catch (error) {
          windowOf().errors++;
          if (label) label.errors++;
          if (++errors <= 3) process.stderr.write(`${(error as Error).message}\n`);
        }
      }
    }),
  );
  return { windows, elapsedS: (performance.now() - start) / 1000, startedAt: performance.timeOrigin + start };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** The figures of one list of latencies over `seconds`. */
function summarise(latencies: number[], errors: number, seconds: number, refused = 0) {
  latencies.sort((a, b) => a - b);
  return {
    refused,
    ok: latencies.length,
    rps: latencies.length / seconds,
    p50: pct(latencies, 50),
    p90: pct(latencies, 90),
    p99: pct(latencies, 99),
    max: latencies.at(-1) ?? NaN,
    mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
    errors,
  };
}

if (args.warmupS) await phase(args.warmupS);
if (args.announce) process.stdout.write(`RESULT ${JSON.stringify({ warmedUp: true })}\n`);
const cpuBefore = process.cpuUsage();
measuring = true;
const { windows, elapsedS, startedAt } = await phase(args.durationS, args.windowS);
for (const { agent } of targets) agent.destroy();
// Paced: every request was sent within the run, however late its answer came.
const measuredS = args.rate > 0 ? Math.min(elapsedS, args.durationS) : elapsedS;
const all = summarise(
  windows.flatMap((w) => w.latencies),
  windows.reduce((a, w) => a + w.errors, 0),
  measuredS,
  windows.reduce((a, w) => a + w.refused, 0),
);
process.stdout.write(
  `RESULT ${JSON.stringify({
    ...all,
    cpuS: (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(cpuBefore)),
    ...(byLabel.size > 0 && { byLabel: Object.fromEntries([...byLabel].map(([label, w]) => [label, summarise(w.latencies, w.errors, measuredS, w.refused)])) }),
    ...(args.windowS && {
      startedAt,
      windows: windows.map((w, k) => summarise(w.latencies, w.errors, Math.min(args.windowS!, elapsedS - k * args.windowS!), w.refused)),
    }),
  })}\n`,
);
