// Load generator (its own process): autocannon against one workload. Argument: a JSON object
// {url, workload, users, apiKey?, connections, durationS? | amount?}. Prints `RESULT {…}`.
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
}

const args = JSON.parse(process.argv[2]!) as LoadArgs;
const w = workload(args.workload, args);
let i = args.start ?? 0;
const cpuBefore = process.cpuUsage();

const result = await autocannon({
  url: args.url,
  connections: args.connections,
  ...(args.amount ? { amount: args.amount } : { duration: args.durationS ?? 10 }),
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
    cpuS: (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(cpuBefore)),
  })}\n`,
);
