// soak (only with `--only soak`): one service process under a mixed, paced load for a long time —
// VIP submits and reads, SSE clients connecting and leaving, pushes to signed-in clients, requests
// refused for their input; every write with an Idempotency-Key of its own, as integrators send
// them — to see whether memory, latency or the log drift. Paced rather than saturating: at saturation p99 is queueing,
// which moves with whatever else the shared machine does, and would hide a slow drift.
//
// RSS is compared after a forced full GC at the start (after a warm-up) and at the end, both with
// the load stopped and the same signed-in connections open; in between it is sampled every second
// under load, averaged per window, and a least-squares slope is fitted over the windows.
import Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { collectGarbage, freePort } from '../lib/inspector.js';
import { log, memoryOf, OthersMeter, round, sleep, startChild } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { benchOid } from '../lib/users.js';
import type { WorkloadName } from '../lib/workloads.js';
import { loadProblems, row, startBenchService, type BenchContext, type LoadResult } from './common.js';
import { startWorkers, type Workers } from './sse.js';

/**
 * The service's two time windows, shortened from their defaults (10 minutes of messages kept for
 * Last-Event-ID replay, an hour before ended anonymous streams are deleted): each holds what
 * arrived within it, so at the defaults memory rises for the whole soak by design. Shorter than
 * the warm-up, both are full before the start figure and a rise after it is something else.
 */
const WINDOWS_MS = 30_000;

/** Users with held, signed-in SSE connections: the pushes name only them, so each is delivered. */
const PUSH_USERS = 50;
const CONNECTIONS_PER_USER = 2;

/** The paced mix: rates well under what the service sustains here, so windows compare like with like. */
const MIX: Record<'submit' | 'read' | 'push' | 'invalid', { workload: WorkloadName; users: number; connections: number; rate: number; keyed?: true }> = {
  submit: { workload: 'vip-submit', users: 1000, connections: 16, rate: 100, keyed: true },
  read: { workload: 'vip-read', users: 1000, connections: 16, rate: 200 },
  push: { workload: 'push-one', users: PUSH_USERS, connections: 8, rate: 50, keyed: true },
  invalid: { workload: 'vip-submit-invalid', users: 1000, connections: 2, rate: 10, keyed: true },
};
type Part = keyof typeof MIX;

interface WindowedResult extends LoadResult {
  startedAt: number;
  windows: LoadResult[];
}

/**
 * Runs the three paced generators of MIX at once for `durationS` (cut into `windowS` windows);
 * their pids go into `pids` while they run.
 */
async function mixedLoad(url: string, apiKey: string, durationS: number, windowS?: number, pids: number[] = []): Promise<Record<Part, WindowedResult>> {
  const children = Object.entries(MIX).map(([part, { keyed, ...m }]) => ({
    part: part as Part,
    child: startChild(`soak-${part}`, 'bench/latency.ts', {
      expectReady: false,
      // Keys unique across the warm-up and the run: each phase is a generator of its own.
      args: [JSON.stringify({ url, apiKey, ...m, durationS, windowS, ...(keyed && { keyPrefix: `${part}-${durationS}-${Date.now()}` }) })],
    }),
  }));
  pids.push(...children.map(({ child }) => child.pid));
  try {
    const results = await Promise.all(children.map(async ({ part, child }) => [part, await child.nextResult()] as const));
    return Object.fromEntries(results) as Record<Part, WindowedResult>;
  } finally {
    await Promise.all(children.map(({ child }) => child.stop()));
  }
}

/**
 * Anonymous clients connecting and leaving until stop() is called: a batch connects (each waits
 * for its PB_CONNECT), stays a moment, and the whole batch disconnects.
 */
function churn(workers: Workers) {
  let running = true;
  const totals = { cycles: 0, opened: 0, failed: 0 };
  let failure: unknown;
  const loop = (async () => {
    while (running) {
      const opened = await workers.all('open', () => ({ count: 20, concurrency: 10 }));
      totals.opened += opened.reduce((a, o) => a + o.opened, 0);
      totals.failed += opened.reduce((a, o) => a + o.failed, 0);
      await sleep(500);
      await workers.all('close');
      totals.cycles++;
    }
  })().catch((error: unknown) => {
    failure = error;
  });
  return {
    totals,
    /** Ends the churn once its current batch left; throws what stopped it early, if anything did. */
    async stop() {
      running = false;
      await loop;
      if (failure) throw failure;
    },
  };
}

/** What the service's log holds: events, their data's bytes, key streams, and the files' size. */
function logSize(dataDir: string) {
  const file = join(dataDir, 'events.sqlite');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const { events, bytes } = db.prepare('SELECT count(*) AS events, coalesce(sum(length(data) + coalesce(length(metadata), 0)), 0) AS bytes FROM events').get() as {
      events: number;
      bytes: number;
    };
    const { keyStreams } = db.prepare("SELECT count(DISTINCT stream) AS keyStreams FROM events WHERE stream LIKE 'idempotency-%'").get() as { keyStreams: number };
    const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
    return { events, bytes, keyStreams, fileMb: (size(file) + size(`${file}-wal`)) / 1024 ** 2 };
  } finally {
    db.close();
  }
}

/** Least-squares slope of y over x. */
function slope(points: Array<[x: number, y: number]>): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx > 0 ? sxy / sxx : NaN;
}

export async function soak(ctx: BenchContext): Promise<ScenarioReport> {
  const durationS = ctx.quick ? 60 : 600;
  const windowS = ctx.quick ? 10 : 60;
  // Long enough for one submit per user (the first registers the user and grants a record), and
  // for the service's windows to fill.
  const warmupS = ctx.quick ? WINDOWS_MS / 1000 + 5 : 60;
  const notes: string[] = [];

  const sim = await ctx.simulator();
  const inspectPort = await freePort();
  const serviceWindows = String(WINDOWS_MS);
  const service = await startBenchService(
    ctx,
    'soak',
    sim.url,
    {
      REALTIME_REPLAY_MS: serviceWindows,
      ANONYMOUS_RETENTION_MS: serviceWindows,
      IDEMPOTENCY_TTL_HOURS: String(WINDOWS_MS / 3_600_000),
      // Its users all sign in from one address at the start: not what the sign-in bounds are for.
      SIGN_IN_PAGES_PER_SECOND: '0',
      SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0',
    },
    [`--inspect=127.0.0.1:${inspectPort}`],
  );
  const logAtStart = logSize(service.dataDir);
  const pid = service.child.pid;
  /** RSS (MB) after a full GC, the load stopped; and the JS heap in use then. */
  const settledMemory = async () => {
    await sleep(2000); // in-flight work and the churned clients' disconnects finish
    const heap = await collectGarbage(inspectPort);
    await sleep(1000); // the allocator hands freed pages back
    return { rssMb: memoryOf(pid).rssKb / 1024, heapMb: heap.usedSize / 1024 ** 2 };
  };

  const held = await startWorkers(1, service.url, 'soak-held');
  const churning = await startWorkers(1, service.url, 'soak-churn');
  let churner: ReturnType<typeof churn> | undefined;
  try {
    // One worker: one answer.
    const signed = (
      await held.all('signin', () => ({
        oIds: Array.from({ length: PUSH_USERS }, (_, i) => benchOid(i)),
        perUser: CONNECTIONS_PER_USER,
        concurrency: 8,
      }))
    )[0]!;
    if (signed.users !== PUSH_USERS) notes.push(`sign-in: ${signed.users}/${PUSH_USERS} users (${signed.failures.slice(0, 2).join('; ')})`);

    // Warm-up: every user known, JIT and pools warm, before the start figure.
    churner = churn(churning);
    const warm = await mixedLoad(service.url, service.apiKey, warmupS);
    await churner.stop();
    for (const part of Object.keys(MIX) as Part[]) notes.push(...loadProblems(`warm-up ${part}`, warm[part]));
    const start = await settledMemory();
    const logAtRun = logSize(service.dataDir);
    log(`soak: start RSS ${round(start.rssMb, 1)} MB, heap ${round(start.heapMb, 1)} MB after a full GC`);

    await held.all('reset');
    // Each second: the service's RSS, and the cores processes outside this run kept busy (a
    // window's p99 on a shared machine moves with them).
    const ours = [sim.child.pid, pid, ...held.list.map((w) => w.pid), ...churning.list.map((w) => w.pid)];
    const samples: Array<{ at: number; rssMb: number; othersCores: number }> = [];
    let others = new OthersMeter(() => ours);
    const sampler = setInterval(() => {
      samples.push({ at: Date.now(), rssMb: memoryOf(pid).rssKb / 1024, othersCores: others.stop() });
      others = new OthersMeter(() => ours);
    }, 1000);
    churner = churn(churning);
    let run: Record<Part, WindowedResult>;
    try {
      run = await mixedLoad(service.url, service.apiKey, durationS, windowS, ours);
    } finally {
      clearInterval(sampler);
      await churner.stop();
    }
    const stats = (await held.all('stats'))[0]!;
    const end = await settledMemory();
    const logAtEnd = logSize(service.dataDir);
    log(`soak: end RSS ${round(end.rssMb, 1)} MB, heap ${round(end.heapMb, 1)} MB after a full GC`);

    // Per window: mean RSS under load and each part's p99.
    const startedAt = run.submit.startedAt;
    const windows = run.submit.windows.map((_, k) => {
      const inWindow = samples.filter((s) => s.at >= startedAt + k * windowS * 1000 && s.at < startedAt + (k + 1) * windowS * 1000);
      const mean = (f: (s: (typeof samples)[number]) => number) => inWindow.reduce((a, s) => a + f(s), 0) / Math.max(1, inWindow.length);
      return {
        minute: ((k + 0.5) * windowS) / 60,
        rssMb: mean((s) => s.rssMb),
        othersCores: mean((s) => s.othersCores),
        p99: Object.fromEntries((Object.keys(MIX) as Part[]).map((part) => [part, run[part].windows[k]?.p99 ?? NaN])) as Record<Part, number>,
      };
    });
    for (const w of windows) {
      log(
        `soak window at ${round(w.minute * 60)} s: RSS ${round(w.rssMb, 1)} MB, p99 submit ${round(w.p99.submit, 1)} / read ${round(w.p99.read, 1)} / push ${round(w.p99.push, 1)} ms; other processes ${round(w.othersCores, 2)} cores`,
      );
    }
    // The trend leaves out the first window: it holds the heap growing back to its working size
    // after the forced GC that took the start figure, a rise that is no leak.
    const trended = windows.length >= 3 ? windows.slice(1) : windows;
    const mbPerMinute = slope(trended.map((w) => [w.minute, w.rssMb]));
    const fittedRiseMb = mbPerMinute * (trended.at(-1)!.minute - trended[0]!.minute);
    const first = windows[0]!;
    const last = windows.at(-1)!;

    for (const part of Object.keys(MIX) as Part[]) notes.push(...loadProblems(part, run[part]));
    const requests = (Object.keys(MIX) as Part[]).reduce((a, part) => a + run[part].ok + run[part].errors, 0);
    const kept = { events: logAtEnd.events - logAtRun.events, bytes: logAtEnd.bytes - logAtRun.bytes };
    notes.push(
      `The log over the run: ${kept.events} events and ${round(kept.bytes / 1024)} KiB of event data kept for ${requests} requests ` +
        `(${round(kept.events / requests, 2)} events, ${round(kept.bytes / requests)} bytes each); at the end ${logAtEnd.keyStreams} Idempotency-Key streams, ` +
        `${logAtEnd.events} events in all, the file ${round(logAtEnd.fileMb, 1)} MB (at the start ${logAtStart.events} events, ${round(logAtStart.fileMb, 1)} MB)`,
    );
    const pushed = run.push.ok * CONNECTIONS_PER_USER;
    if (stats.messages < pushed || stats.unexpectedCloses > 0) {
      notes.push(`pushes: ${stats.messages} of ${pushed} frames delivered to the held connections, ${stats.unexpectedCloses} held connections closed by the server`);
    }
    if (churner.totals.failed > 0) notes.push(`SSE churn: ${churner.totals.failed} connects failed`);
    notes.push(
      `${durationS} s after a ${warmupS} s warm-up, windows of ${windowS} s; the service's message replay window, anonymous stream retention and Idempotency-Key lifetime all ${WINDOWS_MS / 1000} s. Paced mix, every write with a key of its own: VIP submits ${MIX.submit.rate}/s, VIP reads ${MIX.read.rate}/s (1,000 users), invalid VIP submits (400) ${MIX.invalid.rate}/s, ` +
        `1:1 pushes ${MIX.push.rate}/s to ${PUSH_USERS} signed-in users × ${CONNECTIONS_PER_USER} held connections (${stats.messages} frames delivered), ` +
        `SSE churn: ${churner.totals.opened} anonymous connects and disconnects in batches of 20 (${round(churner.totals.opened / durationS)}/s)`,
    );
    notes.push(
      `RSS start/end: after two forced full GCs through the inspector (HeapProfiler.collectGarbage), the load stopped; JS heap in use then ${round(start.heapMb, 1)} → ${round(end.heapMb, 1)} MB. ` +
        `Window means under load (MB): ${windows.map((w) => round(w.rssMb, 1)).join(', ')}; p99 ms per window, submit: ${windows.map((w) => round(w.p99.submit, 1)).join(', ')}; ` +
        `read: ${windows.map((w) => round(w.p99.read, 1)).join(', ')}; push: ${windows.map((w) => round(w.p99.push, 1)).join(', ')}; cores kept busy by other processes: ${windows.map((w) => round(w.othersCores, 2)).join(', ')}`,
    );

    const p99Row = (part: Part, label: string) =>
      row({
        name: 'soak',
        metric: `${label} p99 ms, last window (baseline: first)`,
        value: last.p99[part],
        baseline: first.p99[part],
        goal: '≤ 1.5 × first',
        met: last.p99[part] <= 1.5 * first.p99[part],
      });
    return {
      name: 'soak',
      memory: { ...service.memory.stop(), restMb: round(start.rssMb, 1), note: 'service (at rest: after warm-up and a full GC)' },
      notes,
      rows: [
        row({
          name: 'soak',
          metric: 'RSS MB after full GC, end (baseline: start)',
          value: end.rssMb,
          baseline: start.rssMb,
          goal: '≤ 1.10 × start',
          met: end.rssMb <= 1.1 * start.rssMb,
          heapStartMb: start.heapMb,
          heapEndMb: end.heapMb,
        }),
        row({ name: 'soak', metric: 'JS heap MB after full GC, end (baseline: start)', value: end.heapMb, baseline: start.heapMb, goal: '—', met: null }),
        row({
          name: 'soak',
          metric: 'RSS trend under load, MB/min (windows 2 on)',
          value: mbPerMinute,
          baseline: null,
          goal: 'no upward trend: fitted rise ≤ 5% of start',
          met: fittedRiseMb <= 0.05 * start.rssMb,
          fittedRiseMb,
          windowRssMb: windows.map((w) => w.rssMb),
        }),
        p99Row('submit', 'VIP submit'),
        p99Row('read', 'VIP read'),
        p99Row('push', 'push'),
        row({ name: 'soak', metric: 'log events kept per request over the run', value: kept.events / requests, baseline: null, goal: '—', met: null }),
        row({ name: 'soak', metric: 'log bytes kept per request over the run', value: kept.bytes / requests, baseline: null, goal: '—', met: null }),
      ],
    };
  } finally {
    await churner?.stop().catch(() => undefined);
    await Promise.all([held.stop(), churning.stop()]);
    await service.child.stop();
  }
}
