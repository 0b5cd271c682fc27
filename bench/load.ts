// Load generator (its own process): autocannon against one workload. Argument: a JSON object
// {url, workload, users, apiKey?, connections, durationS? | amount?, warmupAmount?, overallRate?,
// targets?, clientId?}. With `warmupAmount`, that many requests go first, unmeasured (one process
// for both saves a start), announced by a first `RESULT {"warmedUp":true}`. With `targets`
// ([{url, apiKey?}], e.g. two nodes of one deployment) the connections are split evenly across
// them, one autocannon instance each in this process, the requests still round-robin over the
// users from one counter, and the figures are of every answer together (their histograms merged).
// `overallRate` paces the whole generator (requests per second). Prints `RESULT {…}` for the
// measured run.
import autocannon from 'autocannon';
import { workload, type WorkloadName } from './lib/workloads.js';

interface Target {
  url: string;
  apiKey?: string;
}

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
  overallRate?: number;
  targets?: Target[];
  clientId?: string;
}

const args = JSON.parse(process.argv[2]!) as LoadArgs;
const targets: Target[] = args.targets?.length ? args.targets : [{ url: args.url, apiKey: args.apiKey }];
let i = args.start ?? 0;

// Merges the raw results of instances run with skipAggregateResult (not in @types/autocannon).
const aggregateResult = (autocannon as unknown as { aggregateResult(results: unknown[], opts: { url: string; connections: number }): autocannon.Result }).aggregateResult;

function runOn(target: Target, share: number, limit: { amount: number } | { duration: number }, separate: boolean) {
  const w = workload(args.workload, { ...args, apiKey: target.apiKey });
  return autocannon({
    url: target.url,
    connections: share,
    ...limit,
    ...(args.overallRate && { overallRate: args.overallRate / targets.length }),
    timeout: 10,
    headers: w.headers,
    skipAggregateResult: separate,
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
}

async function run(limit: { amount: number } | { duration: number }): Promise<autocannon.Result> {
  if (targets.length === 1) return runOn(targets[0]!, args.connections, limit, false);
  const n = targets.length;
  const shares = targets.map((_, k) => Math.floor(args.connections / n) + (k < args.connections % n ? 1 : 0));
  const each = 'amount' in limit ? { amount: Math.ceil(limit.amount / n) } : limit;
  const results = await Promise.all(targets.map((target, k) => runOn(target, shares[k]!, each, true)));
  return aggregateResult(results, { url: targets[0]!.url, connections: args.connections });
}

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
