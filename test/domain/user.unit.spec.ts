import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Profile, UserEvent } from '../../src/domain/events.js';
import { userDecider, type SyncUser } from '../../src/domain/user.js';
import { deciderSpec } from '../support/deciderSpec.js';

const { given } = deciderSpec(userDecider);
const OID = '1630399136785';
const T1 = '2025-01-01T00:00:00.000Z';
const T2 = '2025-01-02T00:00:00.000Z';
const alice: Profile = { name: 'alice', nickname: 'Alice', avatar: 'https://example.test/alice.png' };

const sync = (profile: Profile, at = T2, newUserId = 'fresh0000000000'): SyncUser => ({ type: 'SyncUser', oId: OID, profile, newUserId, at });
const registered: UserEvent = { type: 'UserRegistered', data: { userId: 'user00000000001', oId: OID, ...alice, at: T1 } };

test('a user the service does not know is registered, with the new internal id', () => {
  given([])
    .when(sync(alice, T1, 'user00000000001'))
    .then([registered]);
});

test('a known user whose profile did not change: nothing is recorded', () => {
  given([registered]).when(sync(alice)).thenNothing();
});

test('a rename records only the changed field, under the same internal id', () => {
  given([registered])
    .when(sync({ ...alice, name: 'alice2' }))
    .then([{ type: 'UserProfileChanged', data: { userId: 'user00000000001', oId: OID, changes: { name: 'alice2' }, at: T2 } }]);
});

test('several changed fields are recorded together, unchanged ones left out', () => {
  given([registered])
    .when(sync({ name: 'alice', nickname: 'Ally', avatar: 'https://example.test/new.png' }))
    .then([{ type: 'UserProfileChanged', data: { userId: 'user00000000001', oId: OID, changes: { nickname: 'Ally', avatar: 'https://example.test/new.png' }, at: T2 } }]);
});

test('registration happens once: after a change, syncing the same profile records nothing', () => {
  const changed: UserEvent = { type: 'UserProfileChanged', data: { userId: 'user00000000001', oId: OID, changes: { nickname: 'Ally' }, at: T2 } };
  given([registered, changed])
    .when(sync({ ...alice, nickname: 'Ally' }))
    .thenNothing();
  given([registered, changed])
    .when(sync(alice))
    .then([{ type: 'UserProfileChanged', data: { userId: 'user00000000001', oId: OID, changes: { nickname: 'Alice' }, at: T2 } }]);
});

test('the internal id never changes and created stays; updated moves', () => {
  const state = given([registered])
    .when(sync({ ...alice, name: 'alice2' }))
    .state();
  assert.equal(state, { exists: true, userId: 'user00000000001', oId: OID, name: 'alice2', nickname: 'Alice', avatar: alice.avatar, created: T1, updated: T2 });
});

test.run();
