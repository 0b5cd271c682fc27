// `node --import tsx bench/actor-cost.ts [--module <clientActor.ts>]… [--rounds 3] [--connections 20000]`
//
// What one realtime client's machine costs on its own, as the hub drives it (hub.ts): run in place
// by the module's `ClientMachines` when it has one (the hub keeps each client's snapshot on its
// connection; here a one-field object keeps it), else as an actor created under the module's
// parent actor (earlier revisions), with the hub's input (its `out` taking the frames; for older
// revisions a listener on every emitted frame and a snapshot observer); started (PB_CONNECT),
// then CLOSE. No HTTP, no store. Each figure comes from a process
// of its own, so modules and measurements do not share a heap or JIT state:
//
// - cpu: process CPU (user + system) per connection over a batch, garbage collection included,
//   default heap settings, after a warm-up batch; the median of three batches.
// - allocated: heap bytes allocated per connection's life, read as the growth of `heapUsed` over a
//   batch run with a young generation large enough that no collection runs in it (checked).
// - retained: heap bytes per started, still open anonymous client, after full collections.
// - heartbeat / message: CPU per HEARTBEAT (anonymous) and per MESSAGE (signed in) sent to open
//   clients.
//
// Several --module flags alternate round by round (a module is any clientActor.ts exporting
// `clientActorLogic` and `realtimeActorsLogic`: a copy of another revision measures that one).
// --sink subject passes each frame through an RxJS Subject with one subscriber, as the hub does.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { GCProfiler } from 'node:v8';
import { Subject } from 'rxjs';
import { createActor, type AnyActorLogic, type AnyMachineSnapshot, type EventObject } from 'xstate';

type Measure = 'cpu' | 'allocated' | 'retained' | 'heartbeat' | 'message';
const MEASURES: Measure[] = ['cpu', 'allocated', 'retained', 'heartbeat', 'message'];

interface ChildJob {
  module: string;
  measure: Measure;
  connections: number;
  signedIn: boolean;
  sink: 'direct' | 'subject';
}

const SPEC_USER = {
  id: 'u1a2b3c4d5e6f7g',
  oId: '1630399136785',
  name: 'alice',
  nickname: 'Alice',
  avatar: 'https://example.test/alice.png',
  email: '',
  emailVisibility: false,
  verified: true,
  collectionId: '_pb_users_auth_',
  collectionName: 'users',
  created: '2026-01-02 03:04:05.678Z',
  updated: '2026-01-02 03:04:05.678Z',
};

// ---- the child: one measurement of one module ----

/** What a module's `ClientMachines` does, whatever the revision's own types. */
interface InPlaceMachines {
  start(input: unknown): AnyMachineSnapshot;
  step(snapshot: AnyMachineSnapshot, event: EventObject): AnyMachineSnapshot;
}

/** An open client, driven the way its revision's hub drives it. */
interface Client {
  send(event: EventObject): void;
}

/** A client run in place: its snapshot kept in one field, as the hub's connection keeps it. */
class InPlaceClient implements Client {
  private snapshot: AnyMachineSnapshot;

  constructor(
    private readonly machines: InPlaceMachines,
    input: unknown,
  ) {
    this.snapshot = machines.start(input);
  }

  send(event: EventObject): void {
    this.snapshot = this.machines.step(this.snapshot, event);
  }
}

async function child(job: ChildJob): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the child with --expose-gc');
  const {
    clientActorLogic: logic,
    realtimeActorsLogic,
    ClientMachines,
  } = (await import(job.module)) as {
    clientActorLogic: AnyActorLogic;
    realtimeActorsLogic: AnyActorLogic | (() => AnyActorLogic);
    ClientMachines?: new () => InPlaceMachines;
  };
  const machines = ClientMachines && new ClientMachines();
  // Today's parent is made by a function and the machine hands its frames to the input's `out`;
  // earlier revisions' parent was the logic itself, and their frames reached listeners (`on`).
  const sendsToOut = typeof realtimeActorsLogic === 'function';
  const parent = createActor(sendsToOut ? realtimeActorsLogic() : realtimeActorsLogic).start();
  let frames = 0;
  const subject = new Subject<{ to: number; frame: unknown }>();
  subject.subscribe(() => frames++);
  const sink: (to: number, frame: unknown) => void = job.sink === 'subject' ? (to, frame) => subject.next({ to, frame }) : () => frames++;
  // The hub's connection: an observer of the actor's snapshots (complete and error only matter).
  const observer = { next() {}, complete() {}, error() {} };
  const session = job.signedIn ? { user: SPEC_USER, sessionId: 'session-1' } : undefined;
  const open = (i: number): Client => {
    const out = { send: (frame: unknown) => sink(i, frame), end() {} };
    const input = { clientId: `client-${i}`, position: 1000 + i, session, out };
    if (machines) return new InPlaceClient(machines, input);
    const actor = createActor(logic, { parent, id: `client-${i}`, input });
    if (!sendsToOut) {
      actor.on('*', (frame: unknown) => sink(i, frame));
      actor.subscribe(observer);
    }
    actor.start();
    return actor;
  };
  const CLOSE = { type: 'CLOSE' };
  const HEARTBEAT = { type: 'HEARTBEAT' };
  const lifecycle = (n: number, from: number) => {
    for (let i = from; i < from + n; i++) open(i).send(CLOSE);
  };
  const n = job.connections;

  switch (job.measure) {
    case 'cpu': {
      lifecycle(n, 0); // warm-up
      const batches: number[] = [];
      for (let b = 0; b < 3; b++) {
        gc();
        const before = process.cpuUsage();
        lifecycle(n, (b + 1) * n);
        const used = process.cpuUsage(before);
        batches.push((used.user + used.system) / n);
      }
      return batches.sort((a, c) => a - c)[1]!;
    }
    case 'allocated': {
      lifecycle(n, 0); // warm-up
      gc();
      gc();
      const profiler = new GCProfiler();
      profiler.start();
      const before = process.memoryUsage().heapUsed;
      lifecycle(n, n);
      const after = process.memoryUsage().heapUsed;
      const gcs = profiler.stop()?.statistics.length ?? 0;
      if (gcs > 0) throw new Error(`${gcs} collections ran during the allocation batch: raise --max-semi-space-size or lower --connections`);
      return (after - before) / n;
    }
    case 'retained': {
      lifecycle(n, 0);
      gc();
      gc();
      const before = process.memoryUsage().heapUsed;
      const actors: Client[] = [];
      for (let i = 0; i < n; i++) actors.push(open(n + i));
      gc();
      gc();
      const perActor = (process.memoryUsage().heapUsed - before) / n;
      for (const actor of actors) actor.send(CLOSE);
      return perActor;
    }
    case 'heartbeat':
    case 'message': {
      const actors: Client[] = [];
      for (let i = 0; i < n; i++) actors.push(open(i));
      let position = 1_000_000;
      const event = () => (job.measure === 'heartbeat' ? HEARTBEAT : { type: 'MESSAGE', position: position++, appId: 'game-one', name: 'reward', data: { points: 5 } });
      const pass = () => {
        for (const actor of actors) actor.send(event());
      };
      pass(); // warm-up
      gc();
      const before = process.cpuUsage();
      pass();
      pass();
      const used = process.cpuUsage(before);
      return (used.user + used.system) / (2 * n);
    }
  }
}

// ---- the parent: rounds of children ----

const { values } = parseArgs({
  options: {
    module: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20000' },
    sink: { type: 'string', default: 'direct' },
    measure: { type: 'string' },
    child: { type: 'string' },
  },
});

if (values.child) {
  const result = await child(JSON.parse(values.child) as ChildJob);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const modules = (values.module ?? ['src/realtime/clientActor.ts']).map((m) => resolve(m));
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const sink = values.sink === 'subject' ? 'subject' : 'direct';
const measures = values.measure ? (values.measure.split(',') as Measure[]) : MEASURES;
const self = new URL(import.meta.url).pathname;

/** One child process: its own heap, its own JIT state. */
function run(job: ChildJob): number {
  // Allocation is read without a collection in between: a young generation that holds a batch.
  const heap = job.measure === 'allocated' ? ['--min-semi-space-size=256', '--max-semi-space-size=256'] : [];
  const out = execFileSync(process.execPath, ['--expose-gc', ...heap, '--import', 'tsx', self, '--child', JSON.stringify(job)], { encoding: 'utf8' });
  return Number(out.trim().split('\n').at(-1));
}

const SCENARIOS: Array<{ label: string; measure: Measure; signedIn: boolean; unit: string; scale: number; connections: number }> = [
  { label: 'anonymous connection: CPU', measure: 'cpu', signedIn: false, unit: 'µs', scale: 1, connections },
  { label: 'signed-in connection: CPU', measure: 'cpu', signedIn: true, unit: 'µs', scale: 1, connections },
  { label: 'anonymous connection: allocated', measure: 'allocated', signedIn: false, unit: 'KB', scale: 1 / 1024, connections: Math.min(connections, 2000) },
  { label: 'signed-in connection: allocated', measure: 'allocated', signedIn: true, unit: 'KB', scale: 1 / 1024, connections: Math.min(connections, 2000) },
  { label: 'open anonymous client: retained', measure: 'retained', signedIn: false, unit: 'KB', scale: 1 / 1024, connections },
  { label: 'HEARTBEAT (anonymous): CPU', measure: 'heartbeat', signedIn: false, unit: 'µs', scale: 1, connections },
  { label: 'MESSAGE (signed in): CPU', measure: 'message', signedIn: true, unit: 'µs', scale: 1, connections },
];

const results = new Map<string, number[]>();
for (let round = 0; round < rounds; round++) {
  for (const scenario of SCENARIOS.filter((s) => measures.includes(s.measure))) {
    for (const module of modules) {
      const value = run({ module, measure: scenario.measure, connections: scenario.connections, signedIn: scenario.signedIn, sink }) * scenario.scale;
      const key = `${scenario.label}\u0000${module}`;
      results.set(key, [...(results.get(key) ?? []), value]);
      process.stderr.write(`round ${round + 1}: ${scenario.label}, ${module}: ${value.toFixed(2)} ${scenario.unit}\n`);
    }
  }
}

const fmt = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `${median.toFixed(2)} (${sorted[0]!.toFixed(2)} – ${sorted.at(-1)!.toFixed(2)})`;
};
process.stdout.write(`sink: ${sink}, ${rounds} rounds, median (min – max)\n\n| figure | ${modules.join(' | ')} |\n|---|${modules.map(() => '---|').join('')}\n`);
for (const scenario of SCENARIOS.filter((s) => measures.includes(s.measure))) {
  process.stdout.write(`| ${scenario.label} (${scenario.unit}) | ${modules.map((m) => fmt(results.get(`${scenario.label}\u0000${m}`) ?? [])).join(' | ')} |\n`);
}
