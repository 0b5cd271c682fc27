// Two service processes (different NODE_IDs) on one data directory under contention: many
// concurrent writers on one user's VIP stream all succeed, and one Idempotency-Key sent to both
// nodes at once is applied on the platform at most once. No answer names an internal stream or
// revision.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { VipRecord as VipRecordSchema } from '../../src/contract/answers.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import type { Answer, ServiceProcess } from '../support/serviceProcess.js';
import { assertAppliedAtMostOnce, openWorld, pointsArrivals, pointsEdit, type World } from './world.js';

type VipRecord = v.InferOutput<typeof VipRecordSchema>;

const WRITERS = 40;
const KEYS = 10;
const INTERNAL = /vip-|user-|idempotency-|operation-|revision/;

const contention = suite<{ world: World; nodes: ServiceProcess[] }>('two nodes on one store under contention');

contention.before(async (context) => {
  context.world = await openWorld();
  context.nodes = await Promise.all([context.world.start('node-one'), context.world.start('node-two')]);
});
contention.after(async ({ world }) => {
  await world?.close();
});

const describe = (answers: Answer[]) =>
  answers
    .filter((a) => a.status !== 200)
    .map((a) => `${a.status} ${a.text}`)
    .join('\n');

contention(`${WRITERS} concurrent VIP submits for one user, split over both nodes, all answer 200 and are each recorded once`, async ({ world, nodes }) => {
  const submits = Array.from({ length: WRITERS }, (_, i) => ({
    oId: ALICE.oId,
    quality: i % 2 ? 'svip' : 'vip',
    expired: `2031-${String(1 + (i % 12)).padStart(2, '0')}-${String((1 + i / 12) | 0).padStart(2, '0')} 00:00:00`,
  }));
  const answers = await Promise.all(submits.map((body, i) => nodes[i % 2]!.request('POST', '/adm/vip/submit', { body, apiKey: world.key })));
  for (const answer of answers) assert.not.match(answer.text, INTERNAL, `an answer names an internal stream or revision: ${answer.text}`);
  assert.ok(
    answers.every((a) => a.status === 200),
    `${answers.filter((a) => a.status !== 200).length} of ${WRITERS} failed:\n${describe(answers)}`,
  );

  // Node 0 reads what node 1 wrote once its subscription has caught up: across nodes, reads follow the log.
  const listed = await eventually(async () => {
    const answer = await nodes[0]!.request('GET', `/adm/vip/${ALICE.oId}`, { apiKey: world.key });
    return answer.status === 200 && (answer.body.data as VipRecord[]).length === 2 ? answer : undefined;
  }, "node 0 lists both of the user's VIP records");
  const records = listed.body.data as VipRecord[];
  assert.equal(records.map((r) => r.quality).sort(), ['svip', 'vip']);
  const userId = records[0]!.userId;
  const recorded = [...world.log.ofType('VipGranted'), ...world.log.ofType('VipRenewed')].filter((e) => e.data.userId === userId);
  assert.is(recorded.length, WRITERS, 'one grant or renewal per acknowledged submit');
});

contention(`one Idempotency-Key sent to both nodes at once (${KEYS} keys together) is applied at most once, exactly once when acknowledged`, async ({ world, nodes }) => {
  const memos = Array.from({ length: KEYS }, (_, i) => `both-nodes-${i}`);
  const send = (node: ServiceProcess, memo: string) => pointsEdit(node, world, `k-${memo}`, memo, BOB.oId);
  const pairs = await Promise.all(memos.map((memo) => Promise.all(nodes.map((node) => send(node, memo)))));

  pairs.forEach((answers, i) => {
    const memo = memos[i]!;
    assertAppliedAtMostOnce(world.sim, memo, answers);
    assert.ok(pointsArrivals(world.sim, memo) <= 1, `"${memo}" was sent to the platform ${pointsArrivals(world.sim, memo)} times`);
    for (const answer of answers) {
      assert.ok([200, 409].includes(answer.status), `"${memo}": ${answer.status} ${answer.text}`);
      assert.not.match(answer.text, INTERNAL, `an answer names an internal stream or revision: ${answer.text}`);
    }
  });

  // Once both are done, each key answers its one outcome again on either node (a node may take a
  // moment to see what the other recorded: polled, bounded).
  for (const [i, memo] of memos.entries()) {
    for (const node of nodes) {
      const retry = await eventually(
        async () => {
          const answer = await send(node, memo);
          return answer.status === 200 ? answer : undefined;
        },
        { what: `"${memo}" to be replayed on ${node.nodeId}`, timeoutMs: 3000, everyMs: 50 },
      ).catch(async (error: Error) => assert.unreachable(`${error.message}: ${(await send(node, memo)).text}`));
      assert.is(retry!.headers.get('idempotent-replayed'), 'true');
      assert.equal(retry!.body, pairs[i]!.find((a) => a.status === 200)?.body ?? retry!.body);
    }
    assert.is(world.sim.pointsApplied(memo), 1, `"${memo}" applied ${world.sim.pointsApplied(memo)} times`);
    assert.is(pointsArrivals(world.sim, memo), 1);
  }
});

contention.run();
