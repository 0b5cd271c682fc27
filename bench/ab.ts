// Two versions of the service side by side on one simulator: rounds of the same admin load against
// each in turn (A B, then B A, …), the service CPU per request of each round, so that a change's
// cost is compared within minutes on a shared machine rather than across runs an hour apart.
//   npx tsx bench/ab.ts <dir of version A> <dir of version B> [rounds=4] [requests=20000] [workloads=vip-submit,vip-read]
// Each directory is a checkout with its node_modules (e.g. `git archive <commit> | tar -x -C dir`
// and a link to this checkout's node_modules); its bench/serve.ts starts the service. AB_FLAGS_A
// and AB_FLAGS_B: node flags for one side (the same code under two runtime settings). AB_CPU:
// both services pinned to this CPU (taskset), the simulator and the load left to the others: on a
// VM whose virtual CPUs run at different speeds, an unpinned pair measures where each landed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { SIMULATOR_KEY } from '../src/community/simulator.js';
import { CpuMeter, log, OthersMeter, round, runToResult } from './lib/proc.js';
import type { WorkloadName } from './lib/workloads.js';
import { startSimulator, type LoadResult } from './scenarios/common.js';

const [dirA, dirB, roundsArg, requestsArg, workloadsArg] = process.argv.slice(2);
if (!dirA || !dirB) {
  process.stderr.write('usage: tsx bench/ab.ts <dir A> <dir B> [rounds] [requests] [workloads]\n');
  process.exit(64);
}
const rounds = Number(roundsArg ?? 4);
const requests = Number(requestsArg ?? 20_000);
const workloads = (workloadsArg ?? 'vip-submit,vip-read').split(',') as WorkloadName[];
const USERS = 1000;
const tmp = mkdtempSync(join(tmpdir(), 'bench-ab-'));

interface Service {
  label: string;
  pid: number;
  url: string;
  apiKey: string;
  stop(): void;
}

/** The version in `dir`, started as the bench starts the service (bench/scenarios/common.ts). */
/** Every service's exit: a stopped service still writes its snapshot into its DATA_DIR. */
const exits: Array<Promise<unknown>> = [];

function startService(label: string, dir: string, simUrl: string): Promise<Service> {
  const flags = (process.env[`AB_FLAGS_${label}`] ?? '').split(' ').filter(Boolean);
  const node = [process.execPath, ...flags, '--import', 'tsx', 'bench/serve.ts'];
  const pinned = process.env.AB_CPU ? ['taskset', '-c', process.env.AB_CPU, ...node] : node;
  const child = spawn(pinned[0]!, pinned.slice(1), {
    cwd: resolve(dir),
    env: {
      ...process.env,
      DATA_DIR: mkdtempSync(join(tmp, `${label}-`)),
      COMMUNITY_URL: simUrl,
      COMMUNITY_KEY: SIMULATOR_KEY,
      LOG_LEVEL: 'warn',
      SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
      HTTP_MAX_CONNECTIONS_PER_IP: '1000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  exits.push(new Promise((exited) => child.once('exit', exited)));
  return new Promise((ready, failed) => {
    child.once('exit', (code) => failed(new Error(`${label} exited (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('READY ')) return;
      const { url, apiKey } = JSON.parse(line.slice(6)) as { url: string; apiKey: string };
      ready({ label, pid: child.pid!, url, apiKey, stop: () => child.kill('SIGTERM') });
    });
  });
}

const load = (service: Service, workload: WorkloadName, amount: number, start: number) =>
  runToResult<LoadResult>('autocannon', 'bench/load.ts', {
    args: [JSON.stringify({ url: service.url, apiKey: service.apiKey, workload, users: USERS, connections: 64, amount, start })],
  });

const sim = await startSimulator(USERS);
// AB_FRESH=1: both versions started anew every round. One process of the same code can run
// 15 – 25 % quicker or slower than another for its whole life (where V8 placed and tuned it), so
// a comparison of one process per side measures that as much as the change.
const fresh = process.env.AB_FRESH === '1';

/** The version started and warmed up: every user known and holding both VIP records. */
async function warmed(label: string, dir: string): Promise<Service> {
  const service = await startService(label, dir, sim.url);
  await load(service, 'vip-submit', 2 * USERS, 0);
  for (const workload of workloads) await load(service, workload, 2 * USERS, 2 * USERS);
  return service;
}

let services: Service[] = [];
try {
  if (!fresh) services = [await warmed('A', dirA), await warmed('B', dirB)];
  const perRequest: Record<string, Record<string, number[]>> = {};
  for (let r = 0; r < rounds; r++) {
    if (fresh) services = [await warmed('A', dirA), await warmed('B', dirB)];
    const order = r % 2 === 0 ? services : [...services].reverse();
    for (const workload of workloads) {
      for (const service of order) {
        const others = new OthersMeter(() => [sim.child.pid]);
        const cpu = new CpuMeter({ service: service.pid }).start();
        const result = await load(service, workload, requests, (r + 2) * requests);
        const us = (cpu.stop().service! * 1e6) / (result.ok + (result.non2xx ?? 0));
        const byLabel = perRequest[workload] ?? {};
        perRequest[workload] = byLabel;
        byLabel[service.label] = [...(byLabel[service.label] ?? []), us];
        log(
          `round ${r + 1} ${workload} ${service.label}: ${round(us)} µs of service CPU per request, ${round(result.rps)} req/s, p99 ${round(result.p99, 1)} ms` +
            `${result.non2xx ? `, ${result.non2xx} non-2xx` : ''}; ${round(others.stop(), 2)} cores of noise`,
        );
      }
    }
    if (fresh) for (const service of services.splice(0)) service.stop();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [workload, byLabel] of Object.entries(perRequest)) {
    const [a, b] = [median(byLabel.A!), median(byLabel.B!)];
    process.stdout.write(`${workload}: A ${round(a)} µs, B ${round(b)} µs of service CPU per request (medians of ${rounds}); B / A = ${round(b / a, 2)}\n`);
  }
} finally {
  for (const service of services) service.stop();
  await sim.child.stop();
  await Promise.all(exits);
  rmSync(tmp, { recursive: true, force: true });
}
