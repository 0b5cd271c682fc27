// pg-node-budget: whether nodes add write capacity, measured as separate machines would show it.
// On this bench's machine every node, the database, the simulator and the load share the same
// cores, so three nodes only split the CPU one node had (pg-admin-write's "3 nodes" row). Here
// each node is held to the same CPU budget (a cgroup quota, bench/lib/cpuBudget.ts; BENCH_NODE_CPU
// cores, 0.25 by default), as a machine of its own would hold it, small enough that three of them,
// the database and the load still leave the machine idle time: one node, then three, the same
// admin writes (64 connections split across the nodes), twice each, alternating, the quicker run
// of each kept. The notes say how much of its budget each node used and how long it was held back,
// and how busy the whole machine was: a run in which the machine had no idle time measures the
// machine, not the nodes.
import { freshDatabase } from '../lib/postgres.js';
import { cpuBudget, cpuBudgetUnavailable, type CpuBudget } from '../lib/cpuBudget.js';
import { log, round } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { USERS } from './admin.js';
import { row, type BenchContext } from './common.js';
import { measure, nodesLabel, pidsOf, startNodes, stopAll, type Measured } from './postgres.js';

const NODE_COUNTS = [1, 3] as const;

export async function pgNodeBudget(ctx: BenchContext): Promise<ScenarioReport> {
  const name = 'pg-node-budget';
  const cores = Number(process.env.BENCH_NODE_CPU ?? 0.25);
  if (!(cores > 0)) throw new Error(`BENCH_NODE_CPU must be a positive number of cores, not ${process.env.BENCH_NODE_CPU}`);
  const metric = `req/s (64 conns), 3 nodes / 1 node, each node held to ${cores} of a core`;
  const unavailable = cpuBudgetUnavailable();
  if (unavailable) {
    log(`${name}: not measured: ${unavailable}`);
    return { name, notes: [`not measured: ${unavailable}`], rows: [row({ name, metric, value: Number.NaN, baseline: null, goal: 'ratio ≥ 1.0', met: null })] };
  }
  const durationS = ctx.quick ? 1 : 15;
  const warmupAmount = ctx.quick ? 200 : 2 * USERS;
  const cluster = await ctx.postgres();
  const sim = await ctx.simulator();
  const notes: string[] = [];
  const best: Record<number, Measured> = {};
  const rounds = ctx.quick ? 1 : 2;
  for (let round_ = 1; round_ <= rounds; round_++) {
    for (const count of NODE_COUNTS) {
      const budgets: CpuBudget[] = [];
      const nodes = await startNodes(ctx, name, sim.url, await freshDatabase(cluster, `budget_${count}n_${round_}`), count, 1, (k) => {
        const budget = cpuBudget(`node${k}-of-${count}-run${round_}`, cores);
        budgets.push(budget);
        return budget.launcher;
      });
      try {
        const label = `${nodesLabel(count)}, ${cores} of a core each, run ${round_}`;
        const pids = pidsOf(nodes, 'node', sim);
        // pidsOf's labels, in the nodes' order (the simulator's last).
        const nodeLabels = Object.keys(pids).slice(0, nodes.length);
        const before = budgets.map((b) => b.throttled());
        const measured = await measure(label, nodes, 'vip-submit', { durationS, warmupAmount }, pids, cluster, notes);
        const used = nodes.map((_, k) => {
          const cpuS = measured.processCpuS[nodeLabels[k]!] ?? Number.NaN;
          const held = budgets[k]!.throttled();
          return `node ${k + 1} ${round(cpuS / durationS, 2)} cores, held back ${round(held.throttledS - before[k]!.throttledS, 1)} s in ${held.periods - before[k]!.periods} periods`;
        });
        const busy = Object.values(measured.processCpuS).reduce((a, s) => a + s, 0) / durationS;
        notes.push(`${label}: ${round(measured.rps, 0)} req/s; ${used.join('; ')}; the nodes, the simulator and the database kept ${round(busy, 2)} cores busy`);
        if (!best[count] || measured.rps > best[count]!.rps) best[count] = measured;
      } finally {
        for (const n of nodes) n.memory.stop();
        await stopAll(nodes);
        for (const b of budgets) b.remove();
      }
    }
  }
  const one = best[1]!;
  const three = best[3]!;
  notes.push(
    `each node's CPU budget is a cgroup quota of ${cores} of a core (every thread of the process counted), in periods of 10 ms; the database, the simulator and the load generator are not held`,
    rounds > 1 ? 'one node and three nodes measured twice each, alternating, the quicker run of each kept' : 'one run each',
  );
  return {
    name,
    notes,
    rows: [
      row({
        name,
        metric,
        value: three.rps,
        baseline: one.rps,
        goal: 'ratio ≥ 1.0',
        met: one.ok > 0 && three.rps >= one.rps,
        p99: three.p99,
        oneNodeP99: one.p99,
        baselineKind: 'one node',
      }),
    ],
  };
}
