// Older event shapes brought to the current one on read (src/domain/eventVersions.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { IdempotencyEvent } from '../../src/domain/events.js';
import { UPCAST_TYPES, upcast } from '../../src/domain/eventVersions.js';
import { idempotencyDecider } from '../../src/domain/idempotency.js';

const AT = '2026-11-20T08:00:00.000Z';
const EXPIRES = '2026-11-21T08:00:00.000Z';
const base = { appId: 'game', requestHash: 'h', at: AT, expires: EXPIRES };

test('a claim written before claims had names gets its node and time as its name, and starts the epoch', () => {
  assert.equal(upcast('IdempotentRequestStarted', { ...base, node: 'n1' }), { ...base, node: 'n1', claim: `n1@${AT}`, epoch: `n1@${AT}` });
});

test('a claim written before nodes were recorded is named by its time alone', () => {
  assert.equal(upcast('IdempotentRequestStarted', { ...base }), { ...base, claim: `@${AT}`, epoch: `@${AT}` });
});

test('a named claim written before epochs existed keeps its name and starts the epoch with it', () => {
  assert.equal(upcast('IdempotentRequestStarted', { ...base, node: 'n1', claim: 'c1' }), { ...base, node: 'n1', claim: 'c1', epoch: 'c1' });
});

test('a current event passes through as the same object, and the old one is not changed in place', () => {
  const current = { ...base, node: 'n1', claim: 'c2', epoch: 'c1' };
  assert.ok(upcast('IdempotentRequestStarted', current) === current);
  const old = { ...base, node: 'n1' };
  upcast('IdempotentRequestStarted', old);
  assert.equal(old, { ...base, node: 'n1' });
});

test('types without an older shape, and data that is not an object, pass through untouched', () => {
  const data = { keyId: 'k1', at: AT };
  assert.ok(upcast('ApiKeyDisabled', data) === data);
  assert.is(upcast('IdempotentRequestStarted', null), null);
  assert.equal(upcast('IdempotentRequestStarted', ['x']), ['x']);
  assert.equal(UPCAST_TYPES, ['IdempotentRequestStarted']);
});

test('the decider folds an upcast event exactly as it folds the old one it still accepts directly', () => {
  for (const data of [{ ...base, node: 'n1' }, { ...base }, { ...base, node: 'n1', claim: 'c1' }]) {
    const old = { type: 'IdempotentRequestStarted', data } as IdempotencyEvent;
    const upcasted = { type: 'IdempotentRequestStarted', data: upcast(old.type, old.data) } as IdempotencyEvent;
    const initial = idempotencyDecider.initialState();
    assert.equal(idempotencyDecider.evolve(initial, upcasted), idempotencyDecider.evolve(initial, old));
  }
});

test.run();
