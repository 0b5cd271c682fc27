// Latency load generator (its own process): `connections` keep-alive connections, each sending
// one request at a time, for `durationS`. With `rate` > 0 the requests are paced (the whole
// generator sends `rate` per second, spread evenly over the connections); with 0 every
// connection sends again as soon as its answer arrives (closed loop, i.e. saturation).
// Latencies are timed with process.hrtime (autocannon rounds to whole milliseconds).
// Argument: JSON {url, workload, users, apiKey?, connections, durationS, rate, warmupS?}.
import { Agent, request } from 'node:http';
import { workload, type WorkloadName } from './lib/workloads.js';

interface LatencyArgs {
  url: string;
  workload: WorkloadName;
  users: number;
  apiKey?: string;
  connections: number;
  durationS: number;
  rate: number;
  warmupS?: number;
}

const args = JSON.parse(process.argv[2]!) as LatencyArgs;
const w = workload(args.workload, args);
const target = new URL(args.url);
const agent = new Agent({ keepAlive: true, maxSockets: args.connections });
let counter = 0;

function send(): Promise<number> {
  const { path, body } = w.request(counter++);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, method: w.method, path, agent, headers: { ...w.headers, ...(body && { 'content-length': Buffer.byteLength(body) }) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode} for ${path}`));
          else resolve(ms);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function phase(seconds: number): Promise<{ latencies: number[]; errors: number; elapsedS: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const interval = args.rate > 0 ? (1000 * args.connections) / args.rate : 0;
  await Promise.all(
    Array.from({ length: args.connections }, async (_, c) => {
      // Paced connections start staggered so the sends spread over the interval.
      let next = start + (interval * c) / args.connections;
      for (;;) {
        if (interval > 0) {
          const wait = next - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          next += interval;
        }
        if (performance.now() >= end) return;
        try {
          latencies.push(await send());
        } catch (error) {
          errors++;
          if (errors <= 3) process.stderr.write(`${(error as Error).message}\n`);
        }
      }
    }),
  );
  return { latencies, errors, elapsedS: (performance.now() - start) / 1000 };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

if (args.warmupS) await phase(args.warmupS);
const cpuBefore = process.cpuUsage();
const { latencies, errors, elapsedS } = await phase(args.durationS);
latencies.sort((a, b) => a - b);
agent.destroy();
process.stdout.write(
  `RESULT ${JSON.stringify({
    ok: latencies.length,
    rps: latencies.length / elapsedS,
    p50: pct(latencies, 50),
    p90: pct(latencies, 90),
    p99: pct(latencies, 99),
    max: latencies.at(-1) ?? NaN,
    mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
    errors,
    cpuS: (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(cpuBefore)),
  })}\n`,
);
