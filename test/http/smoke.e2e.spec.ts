import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';

test('points edit goes through to the platform and answers the platform message', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key();
    const res = await h.post('/adm/points/edit', { oId: ALICE.oId, point: 10, memo: 'daily reward' }, key);
    assert.is(res.status, 200, res.text);
    assert.is(res.body.code, 0);
    assert.match(res.body.msg, /交易oId为/);
    assert.is(h.sim.user(ALICE.oId)!.points, 110);
  } finally {
    await h.close();
  }
});

test.run();
