// `cli operations`: an operator lists the operations whose outcome is unknown and resolves one,
// as a child process on the store a running service uses; the service's answer to the request's
// Idempotency-Key follows the resolution.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { cli as runCli } from '../support/serviceProcess.js';
import { failAppendsOf } from '../support/appendFaults.js';

const cli = (dataDir: string, ...args: string[]) => runCli(dataDir, 'operations', ...args);

test('list --unknown shows what a restart closed out; resolve --applied records who decided and the key answers accordingly', async () => {
  const h = await startHarness({ env: { NODE_ID: 'node-cli' } });
  try {
    const { key } = await h.key();
    const body = { oId: ALICE.oId, point: 8, memo: 'who knows' };
    const send = () => h.request('POST', '/adm/points/edit', { body, apiKey: key, headers: { 'Idempotency-Key': 'cli-1', 'X-Request-Id': 'trace-cli-1' } });
    const undo = failAppendsOf(h.service.deps.store, 'OperationApplied');
    const first = await send();
    undo();
    await h.restart();
    const operationId = first.body.data.operationId;

    const listed = await cli(h.dataDir, 'list', '--unknown', '--json');
    assert.is(listed.code, 0, listed.stderr);
    const [entry, ...others] = JSON.parse(listed.stdout);
    assert.is(others.length, 0);
    assert.equal(
      [entry.operationId, entry.status, entry.kind, entry.oId, entry.node, entry.request],
      [operationId, 'unknown', 'PointsEditRequested', ALICE.oId, 'node-cli', { point: 8, memo: 'who knows' }],
    );
    assert.match(entry.reason, /restarted/);
    // What the caller sent, beside the internal id: what a developer reports.
    assert.equal([entry.idempotencyKey, entry.requestId], ['cli-1', 'trace-cli-1']);
    const human = await cli(h.dataDir, 'list', '--unknown');
    assert.match(human.stdout, new RegExp(`^OPERATION +IDEMPOTENCY-KEY +REQUEST-ID +STATUS[^\\n]*\\n${operationId} +cli-1 +trace-cli-1 +unknown +PointsEdit +${ALICE.oId}`));
    // Found by what the caller quotes: the key, the request id, or a part of either.
    for (const text of ['cli-1', 'trace-cli', operationId]) {
      const found = await cli(h.dataDir, 'list', '--unknown', '--search', text, '--json');
      assert.equal(
        JSON.parse(found.stdout).map((o: { operationId: string }) => o.operationId),
        [operationId],
        `--search ${text}`,
      );
    }
    const none = await cli(h.dataDir, 'list', '--unknown', '--search', 'someone-else');
    assert.match(none.stdout, /No operation without a known outcome matches "someone-else"/);

    const resolved = await cli(h.dataDir, 'resolve', operationId, '--applied', '--note', 'seen in the ledger', '--by', 'carol', '--json');
    assert.is(resolved.code, 0, resolved.stderr);
    assert.equal([JSON.parse(resolved.stdout).status, JSON.parse(resolved.stdout).resolution.by], ['applied', { kind: 'operator', name: 'carol' }]);
    assert.match((await cli(h.dataDir, 'list', '--unknown')).stdout, /No operation has an unknown outcome/);

    const again = await cli(h.dataDir, 'resolve', operationId, '--not-applied');
    assert.is(again.code, 1);
    assert.match(again.stderr, /is applied, not unknown: only an unknown outcome can be resolved/);
    const neither = await cli(h.dataDir, 'resolve', operationId);
    assert.is(neither.code, 1);
    assert.match(neither.stderr, /exactly one of --applied and --not-applied/);

    // The running service learns the resolution through the store's subscription.
    await h.caughtUp();
    const retry = await send();
    assert.is(retry.status, 200, retry.text);
    assert.match(retry.body.msg, /resolved by operator carol: seen in the ledger/);
    assert.is(h.sim.user(ALICE.oId)!.ledger.filter((e) => e.memo === 'who knows').length, 1);
  } finally {
    await h.close();
  }
});

test.run();
