// `audit medals|items <oId>` (README, "API keys (operator CLI)"), run as the operator runs them —
// a child process on the service's data directory: the entries the audit endpoints answer, every
// app's, as one JSON array or a table; and an oId is taken only in the form every request takes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { cli } from '../support/serviceProcess.js';

const ATTR = 'url=https://example.test/m.png&backcolor=ffffff&fontcolor=000000';

/** Medals given and removed, items added and deducted (one deduction refused), by two apps. */
async function seeded(run: (h: Harness, auditor: string) => Promise<void>) {
  const h = await startHarness();
  try {
    const one = await h.key(['*'], 'game-one');
    const two = await h.key(['*'], 'game-two');
    const auditor = await h.key(['audit:read'], 'audit-desk', { allApps: true });
    assert.is((await h.post('/adm/medal/give', { oId: ALICE.oId, name: 'Early', description: 'early bird', attr: ATTR }, one.key)).status, 200);
    assert.is((await h.post('/adm/medal/give', { oId: ALICE.oId, name: '先锋', description: 'pioneer', attr: ATTR }, two.key)).status, 200);
    assert.is((await h.post('/adm/medal/remove', { oId: ALICE.oId, name: 'Early' }, one.key)).status, 200);
    assert.is((await h.post('/adm/items/edit', { oId: ALICE.oId, item: 'checkin1day', sum: 3 }, two.key)).status, 200);
    assert.is((await h.post('/adm/items/edit', { oId: ALICE.oId, item: 'checkin1day', sum: -50 }, one.key)).status, 409);
    await run(h, auditor.key);
  } finally {
    await h.close();
  }
}

test("audit medals|items --json print the entries the audit endpoints answer, every app's", () =>
  seeded(async (h, auditor) => {
    const [medals, items] = await Promise.all([cli(h.dataDir, 'audit', 'medals', ALICE.oId, '--json'), cli(h.dataDir, 'audit', 'items', ALICE.oId, '--json')]);
    for (const [kind, run, count] of [
      ['medals', medals, 3],
      ['items', items, 2],
    ] as const) {
      assert.is(run.code, 0, run.stderr);
      assert.is(run.stdout.trimEnd().split('\n').length, 1, 'exactly one JSON document');
      const answer = await h.get(`/adm/audit/${kind}/${ALICE.oId}`, auditor);
      assert.is(answer.status, 200, answer.text);
      assert.is(answer.body.data.items.length, count, kind);
      assert.equal(JSON.parse(run.stdout), answer.body.data.items, kind);
    }
  }));

test('audit medals|items print a table, oldest first', () =>
  seeded(async (h) => {
    const [medals, items] = await Promise.all([cli(h.dataDir, 'audit', 'medals', ALICE.oId), cli(h.dataDir, 'audit', 'items', ALICE.oId)]);
    assert.is(medals.code, 0, medals.stderr);
    const medalRows = medals.stdout.trimEnd().split('\n');
    assert.match(medalRows[0]!, /^TIME\s+APP\s+KEY\s+ACTION\s+MEDAL\s+OUTCOME\s+DETAIL$/);
    assert.is(medalRows.length, 4);
    assert.match(medalRows[1]!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z +game-one +\w+ +give +Early +applied +勋章安装成功。$/);
    assert.match(medalRows[2]!, / game-two +\w+ +give +先锋 +applied +勋章安装成功。$/);
    assert.match(medalRows[3]!, / game-one +\w+ +remove +Early +applied +勋章移除成功。$/);

    assert.is(items.code, 0, items.stderr);
    const itemRows = items.stdout.trimEnd().split('\n');
    assert.match(itemRows[0]!, /^TIME\s+APP\s+KEY\s+ITEM\s+SUM\s+OUTCOME\s+DETAIL$/);
    assert.is(itemRows.length, 3);
    assert.match(itemRows[1]!, / game-two +\w+ +checkin1day +\+3 +applied +物品变更成功。$/);
    assert.match(itemRows[2]!, / game-one +\w+ +checkin1day +-50 +failed +sum: user \d+ has 5 of checkin1day, cannot deduct 50$/);
  }));

test("audit refuses an oId that is not the platform's user id, for every history, and names the histories it has", async () => {
  const h = await startHarness();
  try {
    const cases = [...['points', 'medals', 'items', 'vip'].map((kind) => [kind, 'alice']), ['medals', `0${ALICE.oId}`], ['items', '12345678901234567890']];
    const runs = await Promise.all(cases.map(async ([kind, oId]) => ({ kind, oId, run: await cli(h.dataDir, 'audit', kind!, oId!) })));
    for (const { kind, oId, run } of runs) {
      assert.is(run.code, 1, `${kind} ${oId}: ${run.stdout}`);
      assert.is(run.stdout, '', `${kind} ${oId}`);
      assert.match(run.stderr, new RegExp(`audit ${kind}: oId must be the platform's user id \\(digits with no leading zero, at most 19\\)`), `${kind} ${oId}`);
    }
    const [missing, unknown, empty] = await Promise.all([cli(h.dataDir, 'audit', 'medals'), cli(h.dataDir, 'audit', 'badges', ALICE.oId), cli(h.dataDir, 'audit', 'items', '42')]);
    assert.is(missing.code, 1);
    assert.match(missing.stderr, /audit medals: the oId is required/);
    assert.is(unknown.code, 1);
    assert.match(unknown.stderr, /audit: unknown history "badges" \(points, medals, items, vip\)/);
    assert.is(empty.code, 0, empty.stderr);
    assert.is(empty.stdout, 'No item edits recorded for oId 42.\n');
  } finally {
    await h.close();
  }
});

test.run();
