// `node --import tsx bench/sse-heap.ts [--connections 5000] [--signed-in] [--bare] [--top 40] [--retainers]`
//
// What one open SSE connection keeps, by kind of object: the service (or the bare broadcaster,
// --bare) is started with its inspector on, a few connections are opened and closed (warm-up),
// then a heap snapshot is taken after full collections, `--connections` anonymous connections (or
// signed-in ones, --signed-in: the real sign-in, ten connections per user) are opened, and a
// second snapshot is taken the same way. The table is the difference of the two, per connection:
// self bytes and object counts by V8 node type and constructor name, largest first, then the JS
// heap and RSS differences (RSS − heap ≈ what lives outside V8's heap: libuv handles, the HTTP
// parser, buffers' backing stores, malloc's own overhead). --retainers adds a table of the objects
// made since the first snapshot by what holds them (the holder's kind and the edge's name), which
// says whose an `Object` or an array is.
import { parseArgs } from 'node:util';
import { WebSocket } from 'undici';
import { freePort } from './lib/inspector.js';
import { memoryOf, round, sleep } from './lib/proc.js';
import { benchOid } from './lib/users.js';
import { startBaseline, startBenchService, startSimulator, type BenchContext } from './scenarios/common.js';
import { startWorkers } from './scenarios/sse.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '5000' },
    'signed-in': { type: 'boolean', default: false },
    bare: { type: 'boolean', default: false },
    top: { type: 'string', default: '40' },
    retainers: { type: 'boolean', default: false },
  },
});
const connections = Number(values.connections);

/** Full collections, then a heap snapshot; answers the bytes and counts by "type:name". */
async function snapshot(
  port: number,
  seen?: Set<number>,
): Promise<{
  byKind: Map<string, { size: number; count: number }>;
  heapUsed: number;
  ids: Set<number>;
  newMapOwners: Map<string, number>;
  byRetainer: Map<string, { size: number; count: number }>;
}> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  const chunks: string[] = [];
  const waiting = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: { chunk: string }; result?: unknown };
    if (message.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(message.params!.chunk);
    else if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve());
    socket.addEventListener('error', () => reject(new Error('inspector unreachable')));
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('HeapProfiler.collectGarbage');
  await call('HeapProfiler.collectGarbage');
  const { usedSize } = (await call('Runtime.getHeapUsage')) as { usedSize: number };
  await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  socket.close();
  const snap = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = snap.snapshot.meta.node_types[0];
  const idAt = fields.indexOf('id');
  const ids = new Set<number>();
  for (let i = 0; i < snap.nodes.length; i += width) ids.add(snap.nodes[i + idAt]!);
  // Objects that got a hidden class (map) of their own since the first snapshot: each costs a
  // map and its descriptors, and a shape per connection is usually avoidable.
  const edgeWidth = snap.snapshot.meta.edge_fields.length;
  const [toAt, edgeNameAt, edgeTypeAt] = ['to_node', 'name_or_index', 'type'].map((f) => snap.snapshot.meta.edge_fields.indexOf(f)) as [number, number, number];
  const edgeTypes = snap.snapshot.meta.edge_types[0];
  const countAt = fields.indexOf('edge_count');
  const newMapOwners = new Map<string, number>();
  if (seen) {
    let edge = 0;
    for (let i = 0; i < snap.nodes.length; i += width) {
      const count = snap.nodes[i + countAt]!;
      for (let e = 0; e < count; e++, edge += edgeWidth) {
        const to = snap.edges[edge + toAt]!;
        const edgeType = edgeTypes[snap.edges[edge + edgeTypeAt]!];
        if (edgeType !== 'internal' || snap.strings[snap.edges[edge + edgeNameAt]!] !== 'map') continue;
        if (seen.has(snap.nodes[to + idAt]!)) continue;
        if (snap.strings[snap.nodes[to + nameAt]!] !== 'system / Map') continue;
        // Named by its type, constructor and first property names.
        const names: string[] = [];
        for (let f = edge - e * edgeWidth, k = 0; k < count && names.length < 6; k++, f += edgeWidth) {
          if (edgeTypes[snap.edges[f + edgeTypeAt]!] === 'property') names.push(snap.strings[snap.edges[f + edgeNameAt]!]!);
        }
        const owner = `${types[snap.nodes[i + typeAt]!]}:${snap.strings[snap.nodes[i + nameAt]!]!.slice(0, 60)} {${names.join(', ')}}`;
        newMapOwners.set(owner, (newMapOwners.get(owner) ?? 0) + 1);
      }
    }
  }
  const byRetainer = new Map<string, { size: number; count: number }>();
  if (seen && values.retainers) {
    const kindOf = (i: number) => `${types[snap.nodes[i + typeAt]!]}:${snap.strings[snap.nodes[i + nameAt]!]!.slice(0, 40)}`;
    // The first strong holder of every node (by node index: that node and the edge), then two
    // levels of holders for each new node.
    const nodeCount = snap.nodes.length / width;
    const holderNode = new Int32Array(nodeCount).fill(-1);
    const holderEdge = new Int32Array(nodeCount);
    let edge = 0;
    for (let i = 0; i < snap.nodes.length; i += width) {
      const count = snap.nodes[i + countAt]!;
      for (let e = 0; e < count; e++, edge += edgeWidth) {
        const to = snap.edges[edge + toAt]! / width;
        if (holderNode[to] !== -1) continue;
        const edgeType = edgeTypes[snap.edges[edge + edgeTypeAt]!]!;
        if (edgeType === 'weak' || edgeType === 'shortcut') continue;
        holderNode[to] = i / width;
        holderEdge[to] = edge;
      }
    }
    const edgeLabel = (at: number) => {
      const edgeType = edgeTypes[snap.edges[at + edgeTypeAt]!]!;
      return edgeType === 'element' || edgeType === 'hidden' ? '[]' : snap.strings[snap.edges[at + edgeNameAt]!]!.slice(0, 30);
    };
    const holder = new Map<number, string>();
    for (let n = 0; n < nodeCount; n++) {
      if (holderNode[n] === -1 || seen.has(snap.nodes[n * width + idAt]!)) continue;
      const h = holderNode[n]!;
      let by = `${kindOf(h * width)} .${edgeLabel(holderEdge[n]!)}`;
      if (holderNode[h] !== -1) by += ` ← ${kindOf(holderNode[h]! * width)} .${edgeLabel(holderEdge[h]!)}`;
      holder.set(n * width, by);
    }
    for (const [to, by] of holder) {
      const type = types[snap.nodes[to + typeAt]!]!;
      const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'code' ? type : kindOf(to);
      const key = `${name}  ← ${by}`;
      const entry = byRetainer.get(key) ?? { size: 0, count: 0 };
      entry.size += snap.nodes[to + sizeAt]!;
      entry.count++;
      byRetainer.set(key, entry);
    }
  }
  const byKind = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    let name = snap.strings[snap.nodes[i + nameAt]!]!;
    // Strings and code by type only: their names are their contents.
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'code' || type === 'number') name = '';
    else if (name.length > 60) name = `${name.slice(0, 57)}…`;
    const key = `${type}:${name}`;
    const entry = byKind.get(key) ?? { size: 0, count: 0 };
    entry.size += snap.nodes[i + sizeAt]!;
    entry.count++;
    byKind.set(key, entry);
  }
  return { byKind, heapUsed: usedSize, ids, newMapOwners, byRetainer };
}

const port = await freePort();
const ctx: BenchContext = { quick: false, tmp: '/tmp', profile: false, simulator: () => startSimulator(), postgres: () => Promise.reject(new Error('no')) };
const nodeFlags = [`--inspect=127.0.0.1:${port}`];
let server: { url: string; pid: number; stop(): Promise<void> };
let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
if (values.bare) {
  const bare = await startBaseline('sse-baseline', 'bench/baselines/sse-server.ts', { NODE_OPTIONS: `--inspect=127.0.0.1:${port}` });
  bare.memory.stop();
  server = { url: bare.url, pid: bare.child.pid, stop: () => bare.child.stop() };
} else {
  sim = await startSimulator();
  const service = await startBenchService(
    ctx,
    'sse-heap',
    sim.url,
    { REALTIME_HEARTBEAT_MS: '15000', SIGN_IN_PAGES_PER_SECOND: '0', SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0' },
    nodeFlags,
  );
  service.memory.stop();
  server = { url: service.url, pid: service.child.pid, stop: () => service.child.stop() };
}
try {
  const workers = await startWorkers(4, server.url);
  await workers.all('open', () => ({ count: 100, concurrency: 16 }));
  await workers.all('close');
  await sleep(1000);
  const before = await snapshot(port);
  const rssBefore = memoryOf(server.pid).rssKb;
  if (values['signed-in']) {
    const users = Math.ceil(connections / 10);
    const oIds = Array.from({ length: users }, (_, i) => benchOid(i));
    const byWorker = Array.from({ length: 4 }, (_, k) => oIds.filter((_, i) => i % 4 === k));
    await workers.all(values.bare ? 'baseline' : 'signin', (k) => ({ oIds: byWorker[k], perUser: 10, concurrency: 8 }));
  } else {
    await workers.all('open', () => ({ count: connections / 4, concurrency: 64 }));
  }
  await sleep(2000);
  const rssOpen = memoryOf(server.pid).rssKb;
  const after = await snapshot(port, before.ids);
  const rssAfterGc = memoryOf(server.pid).rssKb;
  const rows = [...after.byKind.entries()]
    .map(([kind, a]) => {
      const b = before.byKind.get(kind) ?? { size: 0, count: 0 };
      return { kind, bytes: (a.size - b.size) / connections, count: (a.count - b.count) / connections };
    })
    .filter((r) => Math.abs(r.bytes) >= 1)
    .sort((x, y) => y.bytes - x.bytes);
  const top = Number(values.top);
  process.stdout.write(`per connection (${connections} ${values['signed-in'] ? 'signed-in' : 'anonymous'}, ${values.bare ? 'bare broadcaster' : 'service'}):\n`);
  for (const r of rows.slice(0, top)) process.stdout.write(`${String(round(r.bytes)).padStart(7)} B  ${String(round(r.count, 2)).padStart(6)} ×  ${r.kind}\n`);
  if (values.retainers) {
    process.stdout.write('objects made since, by holder (per connection):\n');
    const held = [...after.byRetainer.entries()].filter(([, r]) => r.count >= connections / 2).sort((x, y) => y[1].size - x[1].size);
    for (const [key, r] of held.slice(0, top))
      process.stdout.write(`${String(round(r.size / connections)).padStart(7)} B  ${String(round(r.count / connections, 2)).padStart(6)} ×  ${key}\n`);
  }
  const owners = [...after.newMapOwners.entries()].filter(([, n]) => n >= connections / 10).sort((x, y) => y[1] - x[1]);
  for (const [owner, n] of owners) process.stdout.write(`objects with a map of their own: ${round(n / connections, 2)} × ${owner}\n`);
  const listed = rows.reduce((a, r) => a + r.bytes, 0);
  process.stdout.write(
    `snapshot nodes, all kinds: ${round(listed)} B per connection; JS heap used after full GC: ${round((after.heapUsed - before.heapUsed) / connections)} B per connection\n` +
      `RSS: ${round(rssBefore / 1024)} MB before, ${round(rssOpen / 1024)} MB open (${round(((rssOpen - rssBefore) * 1024) / connections)} B per connection, before the snapshot's GC), ${round(rssAfterGc / 1024)} MB after (${round(((rssAfterGc - rssBefore) * 1024) / connections)} B)\n`,
  );
  await workers.all('close');
  await workers.stop();
} finally {
  await server.stop();
  await sim?.child.stop();
}
process.exit(0);
