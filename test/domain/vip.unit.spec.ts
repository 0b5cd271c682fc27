import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { batchOf, fold } from '../../src/domain/decider.js';
import type { VipGranted, VipRenewed } from '../../src/domain/events.js';
import { vipDecider, vipList, type SubmitVip } from '../../src/domain/vip.js';
import { deciderSpec } from '../support/deciderSpec.js';

const { given } = deciderSpec(vipDecider);
const actor = { appId: 'game-one', keyId: 'key000000000001' };
const USER = 'user00000000001';
const T1 = '2025-01-01T00:00:00.000Z';
const T2 = '2025-02-01T00:00:00.000Z';

const submit = (quality: 'vip' | 'svip', expired: string, newRecordId: string, at = T1): SubmitVip => ({
  type: 'SubmitVip',
  userId: USER,
  quality,
  expired,
  newRecordId,
  at,
  ...actor,
});
const granted = (quality: 'vip' | 'svip', expired: string, recordId: string, at = T1): VipGranted => ({
  type: 'VipGranted',
  data: { recordId, userId: USER, quality, expired, at, ...actor },
});
const renewed = (quality: 'vip' | 'svip', expired: string, previousExpired: string, recordId: string, at = T2): VipRenewed => ({
  type: 'VipRenewed',
  data: { recordId, userId: USER, quality, expired, previousExpired, at, ...actor },
});

test('a first submission of a quality grants a new record with the new id', () => {
  given([])
    .when(submit('vip', '2026-01-01T00:00:00.000Z', 'rec-a'))
    .then([granted('vip', '2026-01-01T00:00:00.000Z', 'rec-a')]);
});

test('resubmitting a quality the user has keeps the record id and replaces expired', () => {
  given([granted('vip', '2026-01-01T00:00:00.000Z', 'rec-a')])
    .when(submit('vip', '2027-06-30T12:00:00.000Z', 'rec-new', T2))
    .then([renewed('vip', '2027-06-30T12:00:00.000Z', '2026-01-01T00:00:00.000Z', 'rec-a', T2)]);
});

test('a resubmission keeps created and moves updated', () => {
  const state = given([granted('vip', '2026-01-01T00:00:00.000Z', 'rec-a', T1)])
    .when(submit('vip', '2027-01-01T00:00:00.000Z', 'rec-new', T2))
    .state();
  assert.equal(state.vip, { id: 'rec-a', userId: USER, quality: 'vip', expired: '2027-01-01T00:00:00.000Z', created: T1, updated: T2 });
});

test('an expired in the past is accepted (it ends a VIP early)', () => {
  given([granted('svip', '2030-01-01T00:00:00.000Z', 'rec-s')])
    .when(submit('svip', '2000-01-01T00:00:00.000Z', 'rec-new', T2))
    .then([renewed('svip', '2000-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z', 'rec-s', T2)]);
});

test('vip and svip are separate records: one per user and quality', () => {
  given([granted('vip', '2026-01-01T00:00:00.000Z', 'rec-v')])
    .when(submit('svip', '2026-01-01T00:00:00.000Z', 'rec-s'))
    .then([granted('svip', '2026-01-01T00:00:00.000Z', 'rec-s')]);
});

test('the list shows svip before vip, whatever the order they were granted in', () => {
  const state = fold(vipDecider, [granted('vip', '2026-01-01T00:00:00.000Z', 'rec-v'), granted('svip', '2026-02-01T00:00:00.000Z', 'rec-s')]);
  assert.equal(
    vipList(state).map((r) => [r.quality, r.id]),
    [
      ['svip', 'rec-s'],
      ['vip', 'rec-v'],
    ],
  );
  assert.equal(vipList(vipDecider.initialState()), []);
});

test('batchOf decides each command on the state the previous one left', () => {
  const batch = deciderSpec(batchOf(vipDecider));
  batch
    .given([])
    .when([submit('vip', '2026-01-01T00:00:00.000Z', 'rec-1'), submit('vip', '2026-06-01T00:00:00.000Z', 'rec-2'), submit('svip', '2026-03-01T00:00:00.000Z', 'rec-3')])
    .then([
      granted('vip', '2026-01-01T00:00:00.000Z', 'rec-1'),
      // the second vip sees the record the first one granted: renewed, same id
      renewed('vip', '2026-06-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'rec-1', T1),
      granted('svip', '2026-03-01T00:00:00.000Z', 'rec-3'),
    ]);
});

test('batchOf of nothing decides nothing', () => {
  deciderSpec(batchOf(vipDecider))
    .given([granted('vip', '2026-01-01T00:00:00.000Z', 'rec-1')])
    .when([])
    .thenNothing();
});

test.run();
