// The overview: every node from its heartbeats (live, lapsed, gone), open connections, platform operations per minute by
// outcome, platform call health (this node's metrics), and how far the read models lag.
import type { Overview } from '../../contract/console.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from './consoleRoute.js';

type Health = { ok: number; rejected: number; failed: number; timeout: number };
const HEALTH_KEYS = ['ok', 'rejected', 'failed', 'timeout'] as const;

async function platformHealth({ metrics }: ConsoleDeps): Promise<Overview['platformCalls']> {
  const total: Health = { ok: 0, rejected: 0, failed: 0, timeout: 0 };
  const byEndpoint = new Map<string, Health>();
  for (const { value, labels } of (await metrics.platformCalls.get()).values) {
    const outcome = labels.outcome as keyof Health;
    if (!HEALTH_KEYS.includes(outcome)) continue;
    const endpoint = String(labels.endpoint);
    const counts = byEndpoint.get(endpoint) ?? { ok: 0, rejected: 0, failed: 0, timeout: 0 };
    counts[outcome] += value;
    total[outcome] += value;
    byEndpoint.set(endpoint, counts);
  }
  return { ...total, byEndpoint: [...byEndpoint].map(([endpoint, counts]) => ({ endpoint, ...counts })).sort((a, b) => a.endpoint.localeCompare(b.endpoint)) };
}

/** The heartbeats' view of every node process, with each node's last write to the log beside it. */
async function nodes({ liveness, index }: ConsoleDeps): Promise<Overview['nodes']> {
  const lastWrites = new Map(index.nodes().map(({ node, lastSeen }) => [node, lastSeen]));
  const beating = (await liveness()).map(({ node, instance, state, since, lastBeat, self }) => ({
    node,
    instance,
    state,
    since,
    lastBeat,
    self,
    ...(lastWrites.has(node) && { lastWrite: lastWrites.get(node)! }),
  }));
  const silent = [...lastWrites]
    .filter(([node]) => !beating.some((row) => row.node === node))
    .map(([node, lastWrite]) => ({ node, state: 'gone' as const, since: lastWrite, lastWrite, self: false }));
  return [...beating, ...silent];
}

async function overview(deps: ConsoleDeps): Promise<Overview> {
  const { store, runner, index, readModels, clock, nodeId } = deps;
  const connections = { anonymous: 0, signedIn: 0 };
  for (const client of readModels.clients.all()) connections[client.user ? 'signedIn' : 'anonymous']++;
  const head = await store.headPosition();
  return {
    at: clock.now(),
    node: nodeId,
    nodes: await nodes(deps),
    connections,
    outcomesPerMinute: index.outcomesPerMinute(),
    platformCalls: await platformHealth(deps),
    lag: { head, readModels: Math.max(0, head - runner.position) },
    unknownOutcomes: readModels.operations.withoutOutcome('unknown').length,
  };
}

export const overviewEndpoints = [consoleRoute({ method: 'get', path: '/console/api/overview', handle: (_ctx, _input, deps) => overview(deps) })];
