// The SDK's operations group against a real service: an unknown outcome (the platform applied a
// points edit and never answered) is listed with the Idempotency-Key and X-Request-Id its caller
// sent, found by either, resolved as applied, and then no longer listed; a key of another app sees
// nothing of it, and a key without `operations:resolve` gets a PermissionError.
import { createAdminClient, OutcomeUnknownError, PermissionError } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { rejects } from '../support/rejects.js';

test('operations.list finds an unknown outcome by what its caller sent; operations.resolve settles it', async () => {
  const h = await startHarness({ env: { COMMUNITY_TIMEOUT_MS: '300' } });
  try {
    const admin = createAdminClient({ baseUrl: h.url, apiKey: (await h.key(['*'], 'game-a')).key, maxAttempts: 1 });
    h.sim.faultNext('/user/edit/points', { kind: 'applyThenHang' });
    const error = await rejects(admin.points.edit({ oId: ALICE.oId, point: 4, memo: 'sdk unknown' }, { idempotencyKey: 'order-991' }));
    assert.instance(error, OutcomeUnknownError);
    const { operationId, requestId } = error as OutcomeUnknownError;

    const all = await admin.operations.list();
    assert.equal(
      all.data.operations.map((o) => [o.operationId, o.status, o.idempotencyKey, o.requestId, o.oId]),
      [[operationId, 'unknown', 'order-991', requestId, ALICE.oId]],
    );
    assert.is(all.data.more, false);
    for (const search of ['order-991', 'order', requestId!, operationId]) {
      assert.equal(
        (await admin.operations.list({ search })).data.operations.map((o) => o.operationId),
        [operationId],
        `search ${search}`,
      );
    }
    assert.equal((await admin.operations.list({ search: 'order-992' })).data.operations, []);
    assert.equal((await admin.operations.list({ status: 'pending' })).data.operations, []);

    const otherApp = createAdminClient({ baseUrl: h.url, apiKey: (await h.key(['*'], 'game-b')).key });
    assert.equal((await otherApp.operations.list()).data.operations, [], "another app's key sees none of it");
    const reader = createAdminClient({ baseUrl: h.url, apiKey: (await h.key(['audit:read'], 'game-a')).key });
    assert.instance(await rejects(reader.operations.list()), PermissionError);

    const resolved = await admin.operations.resolve(operationId, { applied: true, note: 'seen in the ledger' });
    assert.equal(resolved.data, { operationId, status: 'applied' });
    assert.equal((await admin.operations.list()).data.operations, []);
  } finally {
    await h.close();
  }
});

test.run();
