// Store-level append load (its own process): `appenders` concurrent appenders on one
// PostgresEventStore, each appending one event at a time to a stream of its own, fenced as the
// command handler fences a keyed request's write: `alongside` names the appender's claim stream,
// checked at its revision (no events of its own). Closed loop: each appender appends again as
// soon as its previous append is answered.
// Argument: JSON {connectionString, appenders, label, warmupS, durationS}. Prints `READY {}` once
// its claim streams exist; on the IPC message {type: 'go'} runs warmupS unmeasured, then
// durationS measured, and prints `RESULT {appends, seconds, latencies, errors, cpuS}`
// (latencies: how many appends took each number of hundredths of a millisecond; an error ends
// nothing: the appender appends again).
import { PostgresEventStore } from '../src/store/postgres.js';
import type { EventToAppend } from '../src/store/port.js';
import { benchEvent } from './lib/pgAppendLoad.js';

interface Args {
  connectionString: string;
  appenders: number;
  label: string;
  warmupS: number;
  durationS: number;
}

const args = JSON.parse(process.argv[2]!) as Args;
const store = await PostgresEventStore.open({ connectionString: args.connectionString });

const claims = Array.from({ length: args.appenders }, (_, k) => `claim-${args.label}-${k}`);
await Promise.all(claims.map((claim) => store.append(claim, [{ type: 'IdempotentRequestStarted', data: { claim: 'bench' } }], { expectedRevision: 'no_stream' })));
process.stdout.write('READY {}\n');
await new Promise<void>((resolve) => process.on('message', (message: { type?: string }) => message.type === 'go' && resolve()));

let errors = 0;
async function appender(k: number, until: number, latencies: Map<number, number> | undefined, revision: { at: number | 'no_stream' }): Promise<number> {
  const stream = `vip-${args.label}-${k}`;
  let appends = 0;
  while (performance.now() < until) {
    const events: EventToAppend[] = [benchEvent(`${args.label}-${k}`, appends)];
    const started = performance.now();
    try {
      const { nextExpectedRevision } = await store.append(stream, events, {
        expectedRevision: revision.at,
        alongside: { streamName: claims[k]!, expectedRevision: 0, events: [] },
      });
      revision.at = nextExpectedRevision;
      const bucket = Math.round((performance.now() - started) * 100);
      latencies?.set(bucket, (latencies.get(bucket) ?? 0) + 1);
      appends++;
    } catch (error) {
      if (++errors <= 3) process.stderr.write(`${(error as Error).message}\n`);
    }
  }
  return appends;
}

const revisions = claims.map(() => ({ at: 'no_stream' as number | 'no_stream' }));
const warmEnd = performance.now() + args.warmupS * 1000;
await Promise.all(claims.map((_, k) => appender(k, warmEnd, undefined, revisions[k]!)));
errors = 0;
const latencies = new Map<number, number>();
const cpuBefore = process.cpuUsage();
const started = performance.now();
const counts = await Promise.all(claims.map((_, k) => appender(k, started + args.durationS * 1000, latencies, revisions[k]!)));
const seconds = (performance.now() - started) / 1000;
const cpuS = (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(cpuBefore));
await store.close();
process.stdout.write(`RESULT ${JSON.stringify({ appends: counts.reduce((a, b) => a + b, 0), seconds, latencies: Object.fromEntries(latencies), errors, cpuS })}\n`, () =>
  process.exit(0),
);
