// pg-freeze: three nodes on one PostgreSQL database under admin writes (64 connections split
// across them, closed loop, bench/latency.ts), twice: once as they are, once with the third node
// frozen (SIGSTOP) for the whole measured run, mid-append. The figure is what the two others'
// writes see: their p99 against the run without the freeze, and whether every request they were
// sent was answered. The frozen node's own requests wait for it and are answered once it resumes.
import { freshDatabase } from '../lib/postgres.js';
import { log, round, startChild } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { describe, USERS } from './admin.js';
import { loadProblems, row, type BenchContext, type LoadResult } from './common.js';
import { startNodes, stopAll } from './postgres.js';

const CONNECTIONS = 64;
/** A request unanswered after this long counts as not answered (the freeze lasts less). */
const TIMEOUT_S = 60;

interface Run {
  others: LoadResult;
  frozen: LoadResult;
}

const sentOf = (r: LoadResult) => r.ok + r.errors + (r.non2xx ?? 0);

export async function pgFreeze(ctx: BenchContext): Promise<ScenarioReport> {
  const freezeS = ctx.quick ? 2 : 20;
  const warmupS = ctx.quick ? 0.5 : 3;
  const cluster = await ctx.postgres();
  const sim = await ctx.simulator();
  const nodes = await startNodes(ctx, 'pg-freeze', sim.url, await freshDatabase(cluster, 'freeze'), 3);
  const frozen = nodes[2]!;
  const notes: string[] = [];

  const run = async (freeze: boolean): Promise<Run> => {
    const child = startChild('latency', 'bench/latency.ts', {
      args: [
        JSON.stringify({
          users: USERS,
          url: nodes[0]!.url,
          // Connection c goes to node c mod 3: 22, 21 and 21 connections.
          targets: nodes.map((n, k) => ({ url: n.url, apiKey: n.apiKey, label: k === 2 ? 'frozen' : 'others' })),
          workload: 'vip-submit',
          connections: CONNECTIONS,
          durationS: freezeS,
          warmupS,
          rate: 0,
          announce: true,
          timeoutS: TIMEOUT_S,
        }),
      ],
      expectReady: false,
    });
    let resume: NodeJS.Timeout | undefined;
    try {
      await child.nextResult();
      if (freeze) {
        frozen.child.process.kill('SIGSTOP');
        log(`pg-freeze: node 3 (pid ${frozen.child.pid}) stopped for ${freezeS} s`);
        resume = setTimeout(() => frozen.child.process.kill('SIGCONT'), freezeS * 1000);
      }
      const result = await child.nextResult<LoadResult & { byLabel: Record<'others' | 'frozen', LoadResult> }>();
      return result.byLabel;
    } finally {
      clearTimeout(resume);
      if (freeze) frozen.child.process.kill('SIGCONT');
      await child.stop();
    }
  };

  let calm: Run;
  let frozenRun: Run;
  try {
    calm = await run(false);
    log(`pg-freeze without the freeze: nodes 1 and 2 ${describe(calm.others)}; node 3 ${describe(calm.frozen)}`);
    frozenRun = await run(true);
    log(`pg-freeze with node 3 frozen: nodes 1 and 2 ${describe(frozenRun.others)}; node 3 ${describe(frozenRun.frozen)}`);
  } finally {
    await stopAll(nodes);
  }
  for (const [label, r] of Object.entries({ 'without the freeze, nodes 1 and 2': calm.others, 'with the freeze, nodes 1 and 2': frozenRun.others })) {
    notes.push(...loadProblems(label, r));
  }
  const answered = (r: LoadResult) => `${r.ok.toLocaleString('en-US')} / ${sentOf(r).toLocaleString('en-US')}`;
  notes.push(
    `three nodes on one database, ${CONNECTIONS} connections closed loop (22 / 21 / 21), VIP submits round-robin over ${USERS} users; ${warmupS} s warm-up, then ${freezeS} s measured, ` +
      `once without and once with node 3 stopped (SIGSTOP) from the start of the measured run to its end; a request unanswered after ${TIMEOUT_S} s counts as not answered`,
    `nodes 1 and 2: without the freeze p50 ${round(calm.others.p50, 1)} ms, p99 ${round(calm.others.p99, 1)} ms, answered ${answered(calm.others)}; ` +
      `with node 3 frozen p50 ${round(frozenRun.others.p50, 1)} ms, p99 ${round(frozenRun.others.p99, 1)} ms, max ${round(frozenRun.others.max)} ms, answered ${answered(frozenRun.others)}`,
    `node 3 itself: without the freeze p99 ${round(calm.frozen.p99, 1)} ms; of its requests sent while it was stopped, ${answered(frozenRun.frozen)} answered once it resumed` +
      (frozenRun.frozen.errors > 0 ? `, ${frozenRun.frozen.errors} failed (reset or refused)` : ''),
  );
  const allAnswered = (r: LoadResult) => r.ok === sentOf(r) && r.ok > 0;
  return {
    name: 'pg-freeze',
    notes,
    rows: [
      row({
        name: 'pg-freeze',
        metric: `p99 ms of nodes 1 and 2 while node 3 is stopped ${freezeS} s (baseline: not stopped)`,
        value: frozenRun.others.p99,
        baseline: calm.others.p99,
        goal: '≤ 2 × baseline',
        met: calm.others.ok > 0 && frozenRun.others.p99 <= 2 * calm.others.p99,
        p50: frozenRun.others.p50,
        baselineP50: calm.others.p50,
      }),
      row({
        name: 'pg-freeze',
        metric: 'requests to nodes 1 and 2 answered while node 3 is stopped (baseline: sent)',
        value: frozenRun.others.ok,
        baseline: sentOf(frozenRun.others),
        goal: 'all',
        met: allAnswered(frozenRun.others),
        frozenNodeAnswered: frozenRun.frozen.ok,
        frozenNodeSent: sentOf(frozenRun.frozen),
      }),
    ],
  };
}
