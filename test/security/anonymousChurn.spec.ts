// Attack: 50 loops from one address, each connecting to the realtime stream, reading its first
// frame and closing, as fast as the node answers, for 30 s. Every connect the node accepts records
// a ClientConnected and a ClientDisconnected (a node of the cluster must find any live client),
// so what one address can leave is bounded by its rate of connects (REALTIME_CONNECTS_BURST,
// then REALTIME_CONNECTS_PER_SECOND) and how long an ended anonymous client is kept
// (ANONYMOUS_RETENTION_MS, here 2 s): the log holds at most
//   2 × (burst + rate × (retention + one retention run + 1 s)) = 2 × (50 + 5 × 4) = 140
// such events at any time and returns to where it was once the loops stop; the node's RSS stays
// within 64 MB of where it started. Meanwhile a client held by another node on the same store is
// answered for by this node's /adm/user/get, and a 404 once it has gone. Two service processes,
// one SQLite file.
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator } from '../../src/community/simulator.js';
import { eventually } from '../support/eventually.js';
import { defaultUsers } from '../support/harness.js';
import { EventLog, issueKey, startServiceProcess, type ServiceProcess } from '../support/serviceProcess.js';
import { connect } from '../support/streamsAndSignIn.js';

const LOOPS = 50;
const RUN_MS = 30_000;
const RETENTION_MS = 2000;
/** The bound above, for the default rate of connects (5 per second after 50 at once). */
const HELD_AT_MOST = 2 * (50 + 5 * 4);
const RSS_GROWTH_AT_MOST_MB = 64;

const rssMb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

/** One connect: the first bytes of the answer, then closed. Resolves with the status. */
function connectAndLeave(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(`${url}/api/realtime`, { agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve(res.statusCode!);
      });
      res.once('end', () => resolve(res.statusCode!));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

test(`${LOOPS} connect–read–close loops from one address for ${RUN_MS / 1000} s: the log stays within ${HELD_AT_MOST} events of where it was and returns there, RSS within ${RSS_GROWTH_AT_MOST_MB} MB; another node's client is found throughout`, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-test-'));
  const sim = await createSimulator({ users: defaultUsers() }).listen();
  const { key } = await issueKey(dataDir, 'user:get');
  const env = { ANONYMOUS_RETENTION_MS: String(RETENTION_MS) };
  const nodes: ServiceProcess[] = [];
  let log: EventLog | undefined;
  try {
    const churned = await startServiceProcess({ dataDir, communityUrl: sim.url, nodeId: 'churned', env });
    nodes.push(churned);
    const other = await startServiceProcess({ dataDir, communityUrl: sim.url, nodeId: 'other', env });
    nodes.push(other);
    const events = new EventLog(dataDir);
    log = events;
    const clientEvents = () => events.after(0).filter((e) => e.stream.startsWith('client-')).length;
    const held = await connect({ url: other.url });
    const lookup = () => churned.request('GET', `/adm/user/get?client_id=${held.clientId}`, { apiKey: key });
    await eventually(async () => (await lookup()).status === 200, 'the churned node to know the other node’s client');
    const baseline = clientEvents();
    const rssAtStart = rssMb(churned.pid);

    const statuses = new Map<number, number>();
    const samples: Array<{ events: number; rss: number; answer: number }> = [];
    const end = Date.now() + RUN_MS;
    const loops = Array.from({ length: LOOPS }, async () => {
      while (Date.now() < end) {
        const status = await connectAndLeave(churned.url);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    });
    const sampling = (async () => {
      while (Date.now() < end) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const answer = await lookup();
        samples.push({ events: clientEvents() - baseline, rss: rssMb(churned.pid) - rssAtStart, answer: answer.body?.data?.authenticated === false ? 200 : answer.status });
      }
    })();
    await Promise.all([...loops, sampling]);

    const served = statuses.get(200) ?? 0;
    assert.ok(served >= 50, `connects were served (${JSON.stringify(Object.fromEntries(statuses))})`);
    assert.ok((statuses.get(429) ?? 0) > 0, 'and past the rate refused');
    const mostHeld = Math.max(...samples.map((s) => s.events));
    assert.ok(mostHeld <= HELD_AT_MOST, `at most ${HELD_AT_MOST} client events held at any time (most: ${mostHeld}; samples ${samples.map((s) => s.events).join(' ')})`);
    const mostRss = Math.max(...samples.map((s) => s.rss));
    assert.ok(mostRss <= RSS_GROWTH_AT_MOST_MB, `RSS grew at most ${RSS_GROWTH_AT_MOST_MB} MB (most: ${mostRss.toFixed(1)} MB)`);
    assert.ok(
      samples.every((s) => s.answer === 200),
      "the other node's live client was answered for all along (authenticated: false)",
    );

    // Once the loops stop and the retention has passed, what they left is gone (but for the stream
    // holding the log's newest event, which waits for a later run).
    await eventually(() => clientEvents() - baseline <= 2, {
      what: () => `the log to return to where it was (${clientEvents() - baseline} client events above)`,
      timeoutMs: 10_000,
    });

    held.stream.close();
    await eventually(async () => (await lookup()).status === 404, 'a 404 once the other node’s client has gone');
  } finally {
    log?.close();
    for (const node of nodes) await node.kill();
    await sim.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
