// Load generator (its own process): autocannon against one workload. Argument: a JSON object
// {url, workload, users, apiKey?, connections, durationS? | amount?, warmupAmount?}. With
// `warmupAmount`, that many requests go first, unmeasured (one process for both saves a start),
// announced by a first `RESULT {"warmedUp":true}`. Prints `RESULT {…}` for the measured run.
import autocannon from 'autocannon';
import { workload, type WorkloadName } from './lib/workloads.js';

interface LoadArgs {
  url: string;
  workload: WorkloadName;
  users: number;
  apiKey?: string;
  connections: number;
  durationS?: number;
  amount?: number;
  /** First request index (so a warm-up and the measured run can continue the round-robin). */
  start?: number;
  warmupAmount?: number;
}

const args = JSON.parse(process.argv[2]!) as LoadArgs;
const w = workload(args.workload, args);
let i = args.start ?? 0;

const run = (limit: { amount: number } | { duration: number }) =>
  autocannon({
    url: args.url,
    connections: args.connections,
    ...limit,
    timeout: 10,
    headers: w.headers,
    requests: [
      {
        method: w.method,
        setupRequest: (request) => {
          const { path, body } = w.request(i++);
          return { ...request, path, ...(body !== undefined && { body }) };
        },
      },
    ],
  });

let warmupProblems = 0;
if (args.warmupAmount) {
  const warm = await run({ amount: args.warmupAmount });
  warmupProblems = warm.non2xx + warm.errors + warm.timeouts;
  // Tells the parent the measured run starts now (it may start its CPU meters).
  process.stdout.write(`RESULT ${JSON.stringify({ warmedUp: true, warmupProblems })}\n`);
}
const cpuBefore = process.cpuUsage();
const result = await run(args.amount ? { amount: args.amount } : { duration: args.durationS ?? 10 });
const ok = result['2xx'];
process.stdout.write(
  `RESULT ${JSON.stringify({
    ok,
    rps: ok / result.duration,
    durationS: result.duration,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.average,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    next: i,
    warmupProblems,
    cpuS: (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(cpuBefore)),
  })}\n`,
);
