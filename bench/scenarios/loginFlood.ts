// login-flood: what a flood of anonymous login pages does to admin writes, on SQLite. One
// service; one SSE connection held open for the run, whose client_id every flooding request
// names (GET /<community>/login?client_id=…, no cookie: the confirmation page, 200). Admin
// writes are paced (the bench's latency client), a small share of what the service sustains, so
// their p50 is a request's own time rather than queueing, and are measured without a flood and
// under each flood of FLOODS in turn. Login pages record nothing: the log is read after the
// floods for any login event.
//
// The floods, from one address unless said: the bench's latency client sending 1,000 and 2,000
// pages/s spread evenly over the second; autocannon at 2,000/s, whose rate limit lets each
// connection send its second's quota at once and then wait for the next second (a burst at the
// top of every second, as a crude flood would send); 1,000/s spread over 250 addresses, each
// within the service's bound per address, which the node's own bound sheds; and, as
// a control, the evenly spread 1,000/s aimed at a bare server, for what the flood's client alone
// costs writes on a machine it shares. A closed-loop pair (64 connections of writes, with and
// without the evenly spread 2,000/s) is reported too, without a goal: at saturation the flood's
// CPU is taken from the writes, whatever the log does.
import Database from 'better-sqlite3';
import { request } from 'node:http';
import { join } from 'node:path';
import { CpuMeter, log, round, startChild, type Child } from '../lib/proc.js';
import type { ScenarioReport } from '../lib/report.js';
import { autocannon, USERS, warmThenMeasure } from './admin.js';
import { loadProblems, row, startBaseline, startBenchService, type BenchContext, type LoadResult } from './common.js';

interface FloodKind {
  rate: number;
  /** `even`: bench/latency.ts, paced; `bursts`: autocannon's per-second quota per connection. */
  shape: 'even' | 'bursts';
  /**
   * `service`: login pages on the service; `bare`: the same generator at the same rate sending
   * reads to a bare node:http server (bench/baselines/read-server.ts) instead, the control: what
   * sharing two cores with a flood's client costs the writes, the service doing nothing for it.
   */
  at: 'service' | 'bare';
  /**
   * `one`: every page from 127.0.0.1, past the service's bound of sign-in pages per address
   * after its burst (429s); `many`: spread over MANY_ADDRESSES loopback addresses, each within
   * its bound, so that only the node's bound (SIGN_IN_PAGES_PER_NODE_PER_SECOND) sheds them.
   */
  from: 'one' | 'many';
}
/** Each round measures the writes under each of these, in this order. */
const FLOODS: FloodKind[] = [
  { rate: 1000, shape: 'even', at: 'bare', from: 'one' },
  { rate: 1000, shape: 'even', at: 'service', from: 'one' },
  { rate: 2000, shape: 'even', at: 'service', from: 'one' },
  { rate: 2000, shape: 'bursts', at: 'service', from: 'one' },
  { rate: 1000, shape: 'even', at: 'service', from: 'many' },
];
/** 127.0.0.2 – 127.0.0.251: at the default 5 pages/s each, room for 1,250 pages/s per address bound. */
const MANY_ADDRESSES = Array.from({ length: 250 }, (_, i) => `127.0.0.${i + 2}`);
/**
 * Enough connections for every flood to be sent at its rate although the service answers a
 * refused page a second late: each connection sends one request at a time, so a flood on few
 * connections would slow itself down to one page a second per connection. (autocannon keeps at
 * most one connection per request per second: 2,000 for its 2,000/s, each bursting at once.)
 */
const FLOOD_CONNECTIONS = 2500;
const floodLabel = ({ rate, shape, at, from }: FloodKind) =>
  `${rate.toLocaleString('en-US')}/s ${shape === 'even' ? 'spread evenly' : 'in bursts (autocannon)'}` +
  `${at === 'bare' ? ' at a bare server (control)' : from === 'many' ? ` from ${MANY_ADDRESSES.length} addresses` : ' from one address'}`;
const hasGoal = (kind: FloodKind) => kind.at === 'service';
/** The paced writes: requests per second over connections. */
const WRITE_RATE = 200;
const WRITE_CONNECTIONS = 16;

/** Opens /api/realtime and resolves with the client_id of its PB_CONNECT frame; close() ends it. */
function connectClient(url: string): Promise<{ clientId: string; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/realtime`, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`/api/realtime answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      const onData = (chunk: string) => {
        buffer += chunk;
        const data = /event: PB_CONNECT\ndata: (.*)\n/.exec(buffer)?.[1];
        if (!data) return;
        res.off('data', onData);
        res.resume();
        resolve({ clientId: (JSON.parse(data) as { client_id: string }).client_id, close: () => req.destroy() });
      };
      res.on('data', onData);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Flood {
  child: Child;
  /** The flood's figures once it ends. */
  result: Promise<LoadResult>;
}

/** Starts the flood and resolves once it is flooding (after its own warm-up). */
async function startFlood(url: string, clientId: string, kind: FloodKind, durationS: number): Promise<Flood> {
  const common = { url, workload: kind.at === 'bare' ? 'vip-read' : 'login-page', users: USERS, clientId, connections: FLOOD_CONNECTIONS, durationS };
  const child =
    kind.shape === 'even'
      ? startChild('flood', 'bench/latency.ts', {
          args: [JSON.stringify({ ...common, rate: kind.rate, warmupS: 0.5, announce: true, ...(kind.from === 'many' && { localAddresses: MANY_ADDRESSES }) })],
          expectReady: false,
        })
      : startChild('flood', 'bench/load.ts', { args: [JSON.stringify({ ...common, overallRate: kind.rate, warmupAmount: kind.rate })], expectReady: false });
  await child.nextResult();
  const result = child.nextResult<LoadResult>();
  result.catch(() => undefined);
  return { child, result };
}

function pacedWrites(url: string, apiKey: string, durationS: number, warmupS: number): Promise<LoadResult & { cpuS?: number }> {
  const child = startChild('latency', 'bench/latency.ts', {
    args: [JSON.stringify({ url, workload: 'vip-submit', users: USERS, apiKey, connections: WRITE_CONNECTIONS, durationS, rate: WRITE_RATE, warmupS })],
    expectReady: false,
  });
  return child.nextResult<LoadResult & { cpuS?: number }>().finally(() => child.stop());
}

/** Pages the flood got an answer to per second, served or refused (autocannon's rps counts 2xx only). */
const answeredPerS = (r: LoadResult) => (r.refused !== undefined ? r.rps : (r.ok + (r.non2xx ?? 0)) / (r.durationS ?? Number.NaN));
const describe = (r: LoadResult) => `p50 ${round(r.p50, 2)} ms, p99 ${round(r.p99, 2)} ms (${round(r.rps)} req/s)`;

export async function loginFlood(ctx: BenchContext): Promise<ScenarioReport> {
  const durationS = ctx.quick ? 2 : 10;
  const warmupS = ctx.quick ? 0.5 : 2;
  const rounds = ctx.quick ? 1 : 2;
  const notes: string[] = [];
  const sim = await ctx.simulator();
  const service = await startBenchService(ctx, 'login-flood', sim.url);
  // Every user known and holding both records: each paced write is a renewal.
  notes.push(...loadProblems('warm-up', await autocannon({ url: service.url, workload: 'vip-submit', apiKey: service.apiKey, connections: 64, amount: 2 * USERS })));
  const client = await connectClient(service.url);
  const bare = await startBaseline('flood-target', 'bench/baselines/read-server.ts', { BENCH_USERS: String(USERS) });
  service.memory.markRest();

  /** Writes (and the flood's own figures) under the flood `kind`, for `seconds` of writes. */
  async function underFlood(kind: FloodKind, run: () => Promise<LoadResult>, seconds: number) {
    // The flood outlasts the writes' start, warm-up and run.
    const flood = await startFlood(kind.at === 'bare' ? bare.url : service.url, client.clientId, kind, seconds + 3);
    const writes = await run();
    const floodResult = await flood.result;
    await flood.child.stop();
    return { writes, flood: floodResult };
  }

  const quiet: LoadResult[] = [];
  const flooded = FLOODS.map(() => [] as LoadResult[]);
  const floods = FLOODS.map(() => [] as LoadResult[]);
  // The service's CPU (cores) over each paced run, warm-up included: the quiet runs', and each flood's.
  const quietCores: number[] = [];
  const floodCores = FLOODS.map(() => [] as number[]);
  const metered = async (cores: number[], run: () => Promise<LoadResult>) => {
    const cpu = new CpuMeter({ service: service.child.pid }).start();
    const started = performance.now();
    const result = await run();
    cores.push(cpu.stop().service! / ((performance.now() - started) / 1000));
    return result;
  };
  const paced = () => pacedWrites(service.url, service.apiKey, durationS, warmupS);
  // Alternating, so a change in what else the machine does falls on every side.
  for (let r = 0; r < rounds; r++) {
    const without = await metered(quietCores, paced);
    log(`login-flood writes without a flood: ${describe(without)}`);
    quiet.push(without);
    notes.push(...loadProblems(`writes without a flood, round ${r + 1}`, without));
    for (const [k, kind] of FLOODS.entries()) {
      const { writes, flood } = await underFlood(kind, () => metered(floodCores[k]!, paced), warmupS + durationS);
      log(
        `login-flood writes under ${floodLabel(kind)}: ${describe(writes)}; the flood: ${round(answeredPerS(flood))} login pages/s answered (${flood.refused ?? flood.non2xx ?? 0} refused), p50 ${round(flood.p50, 2)} ms`,
      );
      flooded[k]!.push(writes);
      floods[k]!.push(flood);
      notes.push(...loadProblems(`writes under ${floodLabel(kind)}, round ${r + 1}`, writes), ...loadProblems(`flood ${floodLabel(kind)}, round ${r + 1}`, flood));
    }
  }

  // Closed loop, for what the evenly spread 2,000/s takes at saturation (full runs only).
  const saturating = FLOODS.find((kind) => kind.at === 'service' && kind.shape === 'even' && kind.rate === 2000)!;
  let closed: { without: LoadResult; with: LoadResult; flood: LoadResult } | undefined;
  if (!ctx.quick) {
    const saturate = () =>
      warmThenMeasure({ url: service.url, workload: 'vip-submit', apiKey: service.apiKey, connections: 64, durationS: 10, warmupAmount: 0 }, {}).then((r) => r.result);
    const without = await saturate();
    const { writes, flood } = await underFlood(saturating, saturate, 11);
    closed = { without, with: writes, flood };
    log(`login-flood closed loop: without ${round(without.rps)} req/s p50 ${without.p50} ms; with ${round(writes.rps)} req/s p50 ${writes.p50} ms`);
  }
  client.close();
  bare.memory.stop();
  await bare.child.stop();

  // What the login pages left in the log: nothing, by design.
  const db = new Database(join(service.dataDir, 'events.sqlite'), { readonly: true });
  const loginEvents = (db.prepare("SELECT count(*) AS n FROM events WHERE type LIKE 'Login%'").get() as { n: number }).n;
  db.close();
  const memory = service.memory.stop();
  await service.child.stop();

  const mean = (list: LoadResult[], p: 'p50' | 'p99' | 'rps') => list.reduce((a, r) => a + r[p], 0) / list.length;
  const meanAnswered = (list: LoadResult[]) => list.reduce((a, r) => a + answeredPerS(r), 0) / list.length;
  const mean2 = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
  const pages = FLOODS.reduce((a, kind, k) => (kind.at === 'service' ? a + floods[k]!.reduce((b, r) => b + r.ok, 0) : a), 0) + (closed?.flood.ok ?? 0);
  notes.push(
    `paced writes: ${WRITE_RATE} VIP submits/s over ${WRITE_CONNECTIONS} connections, ${durationS} s after ${warmupS} s of warm-up, ${rounds} round(s) alternating; ` +
      `p50 without ${quiet.map((r) => round(r.p50, 2)).join(', ')} ms; ` +
      FLOODS.map((kind, k) => `under ${floodLabel(kind)} ${flooded[k]!.map((r) => round(r.p50, 2)).join(', ')} ms`).join('; ') +
      ' (the table: means of the rounds)',
    `the service's CPU over the paced runs: ${round(mean2(quietCores), 2)} cores without a flood; ` +
      FLOODS.map((kind, k) =>
        kind.at === 'bare'
          ? `${round(mean2(floodCores[k]!), 2)} under ${floodLabel(kind)}`
          : `${round(mean2(floodCores[k]!), 2)} under ${floodLabel(kind)} (≈ ${Math.round(((mean2(floodCores[k]!) - mean2(quietCores)) * 1e6) / meanAnswered(floods[k]!))} µs per login page, served or refused)`,
      ).join('; '),
    `floods over ${FLOOD_CONNECTIONS} connections: ` +
      FLOODS.map(
        (kind, k) =>
          `${floodLabel(kind)} answered ${floods[k]!.map((r) => `${round(answeredPerS(r))}/s (p50 ${round(r.p50, 1)} ms, p99 ${round(r.p99, 1)} ms; ${r.refused ?? r.non2xx ?? 0} refused with 429)`).join(', ')}`,
      ).join('; '),
    ...(closed
      ? [
          `closed loop (64 connections of writes, 10 s, no goal): ${round(closed.without.rps)} req/s, p50 ${closed.without.p50} ms without; ` +
            `${round(closed.with.rps)} req/s, p50 ${closed.with.p50} ms under ${floodLabel(saturating)} (${round(answeredPerS(closed.flood))} login pages/s answered)`,
        ]
      : []),
  );
  return {
    name: 'login-flood',
    memory,
    notes,
    rows: [
      ...FLOODS.flatMap((kind, k) => [
        row({
          name: 'login-flood',
          metric: `admin-write p50 ms, paced ${WRITE_RATE}/s, under ${floodLabel(kind)}`,
          value: mean(flooded[k]!, 'p50'),
          baseline: mean(quiet, 'p50'),
          goal: hasGoal(kind) ? '≤ 1.2 × without' : '—',
          met: hasGoal(kind) ? mean(flooded[k]!, 'p50') <= 1.2 * mean(quiet, 'p50') : null,
          p99: mean(flooded[k]!, 'p99'),
          baselineP99: mean(quiet, 'p99'),
          floodRps: meanAnswered(floods[k]!),
          baselineKind: 'the same writes without a flood',
        }),
      ]),
      ...FLOODS.map((kind, k) =>
        row({
          name: 'login-flood',
          metric: `${kind.at === 'service' ? 'login pages answered (served or refused)' : 'reads answered'} per s, ${floodLabel(kind)}`,
          value: meanAnswered(floods[k]!),
          baseline: null,
          goal: `≥ ${(0.95 * kind.rate).toLocaleString('en-US')}`,
          met: meanAnswered(floods[k]!) >= 0.95 * kind.rate,
        }),
      ),
      row({
        name: 'login-flood',
        metric: `login events in the log after ${pages.toLocaleString('en-US')} login pages`,
        value: loginEvents,
        baseline: null,
        goal: '0',
        met: loginEvents === 0,
      }),
    ],
  };
}
