// The doors around exactly-once: a path spelt with other letter cases, a trailing or a doubled
// slash is not the route (404,
// nothing runs, no Idempotency-Key or rate-limit token used), and a key without the route's
// permission is refused before any stored answer is replayed to it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, type Harness, withHarness } from '../support/harness.js';
import { POINTS_PATH, pointsArrivals } from './world.js';

const CASE_VARIANTS = ['/ADM/points/edit', '/Adm/Points/Edit', '/adm/Points/edit', '/adm/points/EDIT', '/ADM/POINTS/EDIT', '/adm/points/edit/', '/adm//points/edit'];

const pointsEdit = (h: Harness, path: string, apiKey: string, idempotencyKey: string | undefined, memo: string) =>
  h.request('POST', path, { body: { oId: ALICE.oId, point: 1, memo }, apiKey, headers: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {} });

test('points edit paths in other letter cases answer 404 and run nothing; the key stays unused for the real path', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    const memo = 'case-variant';
    for (const path of CASE_VARIANTS) {
      const res = await pointsEdit(h, path, key, 'k-case', memo);
      assert.is(res.status, 404, `${path}: ${res.status} ${res.text}`);
      assert.is(res.body.code, 404);
      assert.is(res.headers.get('idempotent-replayed'), null);
    }
    assert.is(pointsArrivals(h.sim, memo), 0, 'nothing reached the platform');
    assert.is((await h.events('operation-')).filter((e) => (e.data as { request?: { memo?: string } }).request?.memo === memo).length, 0, 'no intent recorded');

    const real = await pointsEdit(h, '/adm/points/edit', key, 'k-case', memo);
    assert.is(real.status, 200, real.text);
    assert.is(real.headers.get('idempotent-replayed'), null, 'the key was not used by the variants');
    assert.is(h.sim.pointsApplied(memo), 1);
  }));

test('points edit paths in other letter cases use no rate-limit token', () =>
  withHarness({ RATE_LIMIT_PER_SECOND: '0.001', RATE_LIMIT_BURST: '2' }, async (h) => {
    const { key } = await h.key();
    for (const path of CASE_VARIANTS) {
      const res = await pointsEdit(h, path, key, undefined, 'case-variant-limited');
      assert.is(res.status, 404, `${path}: ${res.status} ${res.text}`);
    }
    assert.is(pointsArrivals(h.sim, 'case-variant-limited'), 0);
    const answers = [];
    for (const memo of ['limited-1', 'limited-2', 'limited-3']) answers.push((await pointsEdit(h, '/adm/points/edit', key, undefined, memo)).status);
    assert.equal(answers, [200, 200, 429], 'the burst of two was still whole');
    assert.is(h.sim.calls(POINTS_PATH), 2);
  }));

test('permission comes before replay: a key of the same app without points:edit gets 403 for a key with a stored answer', () =>
  withHarness({}, async (h) => {
    const writer = await h.key(['*'], 'game-one');
    const reader = await h.key(['vip:read'], 'game-one');
    const memo = 'permission-before-replay';
    const first = await pointsEdit(h, '/adm/points/edit', writer.key, 'k-permission', memo);
    assert.is(first.status, 200, first.text);

    const refused = await pointsEdit(h, '/adm/points/edit', reader.key, 'k-permission', memo);
    assert.is(refused.status, 403, `the stored answer was given to a key without points:edit: ${refused.status} ${refused.text}`);
    assert.is(refused.body.code, 403);
    assert.is(refused.headers.get('idempotent-replayed'), null);
    assert.not.match(refused.text, /积分变更成功/);

    const replayed = await pointsEdit(h, '/adm/points/edit', writer.key, 'k-permission', memo);
    assert.is(replayed.status, 200);
    assert.is(replayed.headers.get('idempotent-replayed'), 'true');
    assert.is(h.sim.pointsApplied(memo), 1);
  }));

test.run();
