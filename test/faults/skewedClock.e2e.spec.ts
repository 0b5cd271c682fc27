// One node's clock moved with libfaketime while the others keep the real time, all on one store:
// nothing is judged by that node's clock against another node's stamps. A key acknowledged on one
// node is not sent again through the node a day ahead; a node a minute ahead does not sweep a
// live node's operation; messages pushed through one node are replayed by a node a quarter of an
// hour off. The skewed node reports its offset on /readyz (503) and as a metric.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE } from '../support/harness.js';
import { libfaketimeMissing, skewedClock } from '../support/faketime.js';
import { issueKey, type ServiceProcess } from '../support/serviceProcess.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { assertReplayed, openWorld, POINTS_PATH, pointsArrivals, pointsEdit, type World } from './world.js';

const HOUR_MS = 3_600_000;
const SUITE_ENV = { NODE_HEARTBEAT_MS: '200', COMMUNITY_TIMEOUT_MS: '15000', OPERATION_PENDING_GRACE_MS: '8000' };

const skewed = suite<{ world: World; nodes: Record<string, ServiceProcess>; operatorKey: string }>('one node with a skewed clock');

skewed.before(async (context) => {
  if (libfaketimeMissing) return;
  context.world = await openWorld(SUITE_ENV);
  // /readyz shows the offset and the position to an operator's key (one that reaches every app).
  context.operatorKey = (await issueKey(context.world.dataDir, 'audit:read', 'ops', '--all-apps')).key;
  context.nodes = {};
  // The node with the true clock first: the ones that join later align with it.
  context.nodes.steady = await context.world.start('steady');
  for (const [name, offset] of [
    ['dayAhead', '+25h'],
    ['minuteAhead', '+60s'],
    ['quarterBehind', '-15m'],
    ['quarterAhead', '+15m'],
  ] as const) {
    context.nodes[name] = await context.world.start(name, skewedClock(offset));
  }
});
skewed.after(async ({ world }) => {
  await world?.close();
});

const readiness = async (node: ServiceProcess, operatorKey: string) => (await node.request('GET', '/readyz', { apiKey: operatorKey })).body;

const run = libfaketimeMissing ? skewed.skip : skewed;
if (libfaketimeMissing) console.log(`skipped: skewed-clock suite — ${libfaketimeMissing}`);

run('each skewed node reports its offset and is not ready; the steady one is ready', async ({ nodes, operatorKey }) => {
  const steady = await readiness(nodes.steady!, operatorKey);
  assert.is(steady.status, 'ready', JSON.stringify(steady));
  assert.ok(Math.abs(steady.clockOffsetMs) < 1000, `steady offset ${steady.clockOffsetMs}`);
  const expected = { dayAhead: 25 * HOUR_MS, minuteAhead: 60_000, quarterBehind: -HOUR_MS / 4, quarterAhead: HOUR_MS / 4 };
  for (const [name, offset] of Object.entries(expected)) {
    const body = await readiness(nodes[name]!, operatorKey);
    assert.is(body.status, 'not ready', `${name}: ${JSON.stringify(body)}`);
    assert.ok(Math.abs(body.clockOffsetMs - offset) < 1000, `${name}: offset ${body.clockOffsetMs}, expected about ${offset}`);
    assert.is(body.reason, 'clock_offset');
    assert.match(body.detail, /clock/);
  }
  const metrics = await nodes.dayAhead!.request('GET', '/metrics');
  const gauge = Number(/^clock_offset_seconds (\S+)$/m.exec(metrics.text)?.[1]);
  assert.ok(Math.abs(gauge - 25 * 3600) < 1, `clock_offset_seconds ${gauge}`);
});

run('a points edit acknowledged on one node and sent again with its key to the node 25 h ahead is not sent again', async ({ world, nodes }) => {
  const first = await pointsEdit(nodes.steady!, world, 'skew-key-expiry', 'skew-key-expiry');
  assert.is(first.status, 200, first.text);
  const again = await pointsEdit(nodes.dayAhead!, world, 'skew-key-expiry', 'skew-key-expiry');
  assert.is(again.status, 200, again.text);
  assertReplayed(again);
  assert.is(pointsArrivals(world.sim, 'skew-key-expiry'), 1);
});

run("a node 60 s ahead does not sweep a live node's operation as unknown", async ({ world, nodes }) => {
  world.sim.faultNext(POINTS_PATH, { kind: 'hang' });
  const held = pointsEdit(nodes.steady!, world, 'skew-sweep', 'skew-sweep');
  const intent = await eventually(() => world.log.pointsIntent('skew-sweep'), { what: 'the intent is recorded' });
  // The node a minute ahead is past the grace by its own clock from the start, and sweeps every
  // 2 s. Only the steady node may close the operation, once the grace is over on the log's clock:
  // whoever closed it first is named in the outcome's metadata.
  const [, outcome] = await eventually(
    () => {
      const events = world.log.stream(intent.stream);
      return events.length > 1 ? events : undefined;
    },
    { what: 'the operation to be closed', timeoutMs: 30_000 },
  );
  assert.is(outcome!.type, 'OperationOutcomeUnknown');
  assert.is(outcome!.metadata?.nodeId, 'steady', `the operation was closed by ${outcome!.metadata?.nodeId}`);
  void held;
});

run('messages pushed through one node are replayed by a node a quarter of an hour off, both ways', async ({ world, nodes, operatorKey }) => {
  for (const [pusher, replayer] of [
    [nodes.quarterBehind!, nodes.steady!],
    [nodes.steady!, nodes.quarterAhead!],
  ] as const) {
    const popup = await connect({ url: replayer.url });
    const cookie = await signIn({ url: replayer.url }, popup.clientId, ALICE.oId);
    const login = await popup.stream.next('login');
    popup.stream.close();
    const name = `skew-replay-${pusher.nodeId}-${replayer.nodeId}`;
    const pushed = await pusher.request('POST', '/adm/message/push', { body: { oIds: [ALICE.oId], name, data: { name } }, apiKey: world.key });
    assert.is(pushed.status, 200, pushed.text);
    const recorded = await eventually(() => world.log.ofType('MessagePushed').find((e) => e.data.name === name), { what: 'the push is recorded' });
    await eventually(async () => (await readiness(replayer, operatorKey)).position >= recorded.position, { what: 'the replaying node has applied the push' });
    const back = await connect({ url: replayer.url }, { cookie, lastEventId: String(login.id) });
    const message = await back.stream.next('message');
    assert.equal(message.data.data, { name }, `${replayer.nodeId} replayed ${JSON.stringify(message.data)}`);
    back.stream.close();
  }
});

skewed.run();
