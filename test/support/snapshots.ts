// What the read-model snapshot suites share: a day of traffic through the service's own API, the
// start-up line about the snapshot, and the comparison of read models restored from a snapshot
// with the read models a replay of the whole log builds.
import { readFile } from 'node:fs/promises';
import * as assert from 'uvu/assert';
import { snapshotFile } from '../../src/core.js';
import type { capturedLog } from './capturedLog.js';
import { ALICE, BOB, type Harness } from './harness.js';
import { readModelStates } from './readModelStates.js';
import { eventually } from './eventually.js';
import { connect, signIn } from './streamsAndSignIn.js';

export const CAROL = { oId: '1630399136790', userName: 'carol', nickname: 'Carol' };

/** The users the traffic acts on, as the simulator seeds them. */
export const TRAFFIC_USERS = [
  { ...ALICE, points: 1000, items: { checkin1day: 2 } },
  { ...BOB, points: 50 },
  { ...CAROL, points: 0 },
];

/** What the service's own API writes in a day: keys, platform operations of every outcome, VIP, pushes, browsers. */
export async function traffic(h: Harness, round = 1): Promise<void> {
  const game = await h.key(['*'], 'game-one');
  const other = await h.key(['points:edit', 'vip:write', 'message:push'], 'Other Game');
  const operator = await h.key(['operations:resolve'], 'ops', { allApps: true });
  const ok = async (answer: Promise<{ status: number; text: string }>, status = 200) => {
    const res = await answer;
    assert.is(res.status, status, res.text);
  };
  await ok(h.post('/adm/points/edit', { oId: ALICE.oId, point: 10 * round, memo: 'daily reward' }, game.key));
  await ok(h.post('/adm/points/edit', { oId: BOB.oId, point: 5, memo: 'level cleared' }, other.key));
  const keyed = { body: { oId: ALICE.oId, point: 3, memo: 'shop' }, apiKey: game.key, headers: { 'Idempotency-Key': `shop-${round}` } };
  await ok(h.request('POST', '/adm/points/edit', keyed));
  await ok(h.request('POST', '/adm/points/edit', keyed));
  h.sim.failNext(1, 'http500');
  await ok(h.post('/adm/points/edit', { oId: CAROL.oId, point: 1, memo: 'refused' }, game.key), 502);
  h.sim.faultNext('/user/edit/points', { kind: 'applyThenReset' });
  const unknown = await h.post<{ data: { operationId: string } }>('/adm/points/edit', { oId: CAROL.oId, point: 2, memo: 'reset' }, game.key);
  assert.is(unknown.status, 502, unknown.text);
  await ok(h.post(`/adm/operations/${unknown.body.data.operationId}/resolve`, { applied: true, note: 'in the ledger' }, operator.key));
  h.sim.faultNext('/user/edit/points', { kind: 'applyThenReset' });
  await ok(h.post('/adm/points/edit', { oId: BOB.oId, point: 4, memo: 'left unknown' }, game.key), 502);
  const attr = 'url=https://file.fishpi.cn/medal.png&backcolor=ffffff&fontcolor=ff3030';
  await ok(h.post('/adm/medal/give', { oId: ALICE.oId, name: `Champion ${round}`, description: 'won the cup', attr }, game.key));
  await ok(h.post('/adm/medal/give', { oId: BOB.oId, name: 'Helper', description: 'helped', attr, data: 'season 3' }, game.key));
  await ok(h.post('/adm/medal/remove', { oId: BOB.oId, name: 'Helper' }, game.key));
  await ok(h.post('/adm/items/edit', { oId: ALICE.oId, item: 'checkin1day', sum: 1 }, game.key));
  await ok(h.post('/adm/items/edit', { oId: BOB.oId, item: 'nameCard', sum: 2 }, game.key));
  await ok(h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: `2027-0${round}-01 00:00:00` }, game.key));
  await ok(h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: `2027-0${round}-15 00:00:00` }, other.key));
  await ok(h.post('/adm/vip/batch-submit', { oId: BOB.oId, vips: [{ quality: 'svip', expired: '2027-02-01 00:00:00' }] }, game.key));
  await ok(h.post('/adm/message/push', { oIds: [ALICE.oId, BOB.oId], name: 'reward', data: { title: '你获得了新的奖励', round } }, game.key));
  await ok(h.post('/adm/message/push', { userIds: ['abcdefghij12345'], name: 'dm', data: {} }, other.key));
  // Browsers: one that leaves without signing in, one that signs in, one that comes back with its session and logs out.
  const anonymous = await connect(h);
  anonymous.stream.close();
  const visitor = await connect(h);
  const cookie = await signIn(h, visitor.clientId, ALICE.oId);
  visitor.stream.close();
  const returning = await connect(h, { cookie });
  returning.stream.close();
  await ok(h.request('POST', '/api/logout', { headers: { Cookie: cookie } }));
  const bob = await connect(h);
  await signIn(h, bob.clientId, BOB.oId);
  bob.stream.close();
  // Every browser's disconnection is recorded before the log is compared.
  await waitUntil(() => h.service.deps.readModels.clients.size === 0, 'every client to be recorded as disconnected');
  await h.caughtUp();
}

async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.ok(condition(), `waited for ${what}`);
}

/** The start-up line about the snapshot of the last start. */
export function snapshotLine(captured: ReturnType<typeof capturedLog>): Record<string, unknown> {
  const lines = captured.lines().filter((line) => /snapshot/.test(String(line.msg)) && !/written/.test(String(line.msg)));
  assert.ok(lines.length > 0, 'the start says what became of the snapshot');
  return lines[lines.length - 1]!;
}

/** The read models as a start from the snapshot built them, and as a replay of the whole log builds them: the same. */
export async function assertSameAsFullReplay(
  h: Harness,
  comparable: (states: Record<string, unknown>) => Record<string, unknown> = (states) => states,
): Promise<Record<string, unknown>> {
  const position = h.service.deps.runner.position;
  const fromSnapshot = comparable(readModelStates(h.service.deps.runner));
  await h.restart({ READ_MODEL_SNAPSHOTS: 'false' });
  assert.is(h.service.deps.runner.position, position, 'nothing was appended between the two starts');
  const replayed = comparable(readModelStates(h.service.deps.runner));
  assert.equal(Object.keys(fromSnapshot).sort(), Object.keys(replayed).sort());
  for (const name of Object.keys(replayed)) assert.equal(fromSnapshot[name], replayed[name], `read model ${name}`);
  return replayed;
}

/**
 * A visitor connected while a snapshot is taken leaves after it, and retention (set to delete ended
 * anonymous streams at once) deletes its stream: the snapshot holds its start, the log none of it.
 * Stops the service; answers the snapshot file as it was written, and the visitor's client id.
 */
export async function visitorDeletedAfterSnapshot(h: Harness): Promise<{ snapshot: Buffer; clientId: string }> {
  const visitor = await connect(h);
  assert.ok(await h.service.snapshots!.write(), 'a snapshot written');
  const snapshot = await readFile(snapshotFile(h.dataDir));
  visitor.stream.close();
  const stream = `client-${visitor.clientId}`;
  await eventually(async () => (await h.events(stream)).some((e) => e.type === 'ClientDisconnected'), "the visitor's leaving in the log");
  await eventually(async () => {
    await h.service.retention.runOnce();
    return (await h.events(stream)).length === 0;
  }, "the visitor's stream deleted");
  await h.service.close();
  return { snapshot, clientId: visitor.clientId };
}
