// push-fairness: what one app pushing at its bounds does to another app's reads, on SQLite. One
// service, two apps' keys. App B reads (GET /adm/vip/:oId, paced: a share of what the service
// sustains, so its latency is a request's own time rather than queueing) without pushes, then
// while app A pushes from PUSHERS connections in a closed loop, each push naming
// PUSH_MAX_RECIPIENTS oIds (the bench users first, then oIds nobody has): A sends as fast as it is
// answered, at the size the service allows, as the attack that found one app's pushes stalling
// another's reads did. The pushes past PUSH_RECIPIENTS_PER_SECOND are refused (429) and counted,
// not failed; A does not wait out their Retry-After. `--only push-fairness`; `PUSH_FAIRNESS_ENV` (JSON) adds to the service's
// environment, to measure other bounds.
import { loadConfig } from '../../src/config.js';
import { log, round, startChild } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { autocannon, USERS } from './admin.js';
import { loadProblems, row, startBenchService, type BenchContext, type LoadResult } from './common.js';

/** App A's connections: the attack's 8 concurrent pushes. */
const PUSHERS = 8;
/** App B's paced reads. */
const READ_RATE = 100;
const READ_CONNECTIONS = 8;

const describe = (r: LoadResult) => `p50 ${round(r.p50, 2)} ms, p99 ${round(r.p99, 2)} ms, max ${round(r.max, 1)} ms (${round(r.rps)} req/s)`;

export async function pushFairness(ctx: BenchContext): Promise<ScenarioReport> {
  const durationS = ctx.quick ? 3 : 10;
  const warmupS = ctx.quick ? 0.5 : 2;
  const extra = JSON.parse(process.env.PUSH_FAIRNESS_ENV ?? '{}') as Record<string, string>;
  const { push } = loadConfig(extra);
  const notes: string[] = [];
  const sim = await ctx.simulator();
  const service = await startBenchService(ctx, 'push-fairness', sim.url, { BENCH_MORE_APPS: 'pusher', ...extra });
  // Every bench user known, so that each read is a lookup and a read of records the service holds.
  notes.push(...loadProblems('warm-up', await autocannon({ url: service.url, workload: 'vip-submit', apiKey: service.apiKey, connections: 64, amount: 2 * USERS })));
  service.memory.markRest();

  const reads = () => {
    const child = startChild('reads', 'bench/latency.ts', {
      args: [JSON.stringify({ url: service.url, workload: 'vip-read', users: USERS, apiKey: service.apiKey, connections: READ_CONNECTIONS, durationS, rate: READ_RATE, warmupS })],
      expectReady: false,
    });
    return child.nextResult<LoadResult>().finally(() => child.stop());
  };

  const quiet = await reads();
  log(`push-fairness app B's reads without pushes: ${describe(quiet)}`);
  const pusher = startChild('pusher', 'bench/latency.ts', {
    args: [
      JSON.stringify({
        url: service.url,
        workload: 'push-many',
        users: USERS,
        recipients: push.maxRecipients,
        apiKey: service.keys.pusher,
        connections: PUSHERS,
        // Outlasts the reads' warm-up and run.
        durationS: warmupS + durationS + 2,
        rate: 0,
        warmupS: 0.5,
        announce: true,
      }),
    ],
    expectReady: false,
  });
  await pusher.nextResult();
  const pushed = pusher.nextResult<LoadResult>();
  const under = await reads();
  const pushes = await pushed;
  await pusher.stop();
  const memory = service.memory.stop();
  await service.child.stop();
  log(`push-fairness app B's reads while app A pushes: ${describe(under)}; app A: ${round(pushes.rps)} answers/s, ${pushes.refused ?? 0} refused, p50 ${round(pushes.p50, 1)} ms`);
  const accepted = (pushes.ok - (pushes.refused ?? 0)) / (warmupS + durationS + 2);
  notes.push(
    ...loadProblems("app B's reads without pushes", quiet),
    ...loadProblems("app B's reads while app A pushes", under),
    ...loadProblems("app A's pushes", pushes),
    `app B: ${READ_RATE} reads/s over ${READ_CONNECTIONS} connections, ${durationS} s after ${warmupS} s of warm-up; without pushes ${describe(quiet)}; while app A pushes ${describe(under)}`,
    `app A: ${PUSHERS} connections in a closed loop, each push ${push.maxRecipients.toLocaleString('en-US')} oIds (PUSH_MAX_RECIPIENTS), PUSH_RECIPIENTS_PER_SECOND ${push.recipientsPerSecond ?? 'off'}: ` +
      `${round(accepted, 1)} pushes/s accepted (${round(accepted * push.maxRecipients)} recipients/s), ${pushes.refused ?? 0} refused with 429, answers p50 ${round(pushes.p50, 1)} ms, p99 ${round(pushes.p99, 1)} ms`,
    ...(Object.keys(extra).length > 0 ? [`service environment added: ${JSON.stringify(extra)}`] : []),
  );
  return {
    name: 'push-fairness',
    memory,
    notes,
    rows: [
      row({
        name: 'push-fairness',
        metric: `app B read p99 ms, paced ${READ_RATE}/s, while app A pushes at its bounds`,
        value: under.p99,
        baseline: quiet.p99,
        goal: '≤ 50 ms',
        met: under.p99 <= 50,
        p50: under.p50,
        baselineP50: quiet.p50,
        baselineKind: 'the same reads without pushes',
      }),
      row({
        name: 'push-fairness',
        metric: "app A's recipients accepted per s",
        value: accepted * push.maxRecipients,
        baseline: null,
        goal: '—',
        met: null,
      }),
    ],
  };
}
