import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyDecider, type ApiKeyCommand } from '../../src/domain/apiKey.js';
import { ConflictError, NotFoundError } from '../../src/domain/errors.js';
import type { ApiKeyEvent } from '../../src/domain/events.js';
import { deciderSpec } from '../support/deciderSpec.js';

const { given } = deciderSpec(apiKeyDecider);
const KEY = 'key000000000001';
const AT = '2025-01-01T00:00:00.000Z';
const LATER = '2025-01-02T00:00:00.000Z';

const issue: Extract<ApiKeyCommand, { type: 'IssueApiKey' }> = {
  type: 'IssueApiKey',
  keyId: KEY,
  appId: 'game-one',
  app: 'Game One',
  hash: 'ab'.repeat(32),
  permissions: ['points:edit', 'vip:read'],
  expires: null,
  at: AT,
};
const { type: _, ...issuedData } = issue;
const issued: ApiKeyEvent = { type: 'ApiKeyIssued', data: issuedData };
const disabled: ApiKeyEvent = { type: 'ApiKeyDisabled', data: { keyId: KEY, at: AT } };
const enabled: ApiKeyEvent = { type: 'ApiKeyEnabled', data: { keyId: KEY, at: AT } };
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { keyId: KEY, at: AT } };

const cmd = (type: 'DisableApiKey' | 'EnableApiKey' | 'RevokeApiKey', keyId = KEY): ApiKeyCommand => ({ type, keyId, at: LATER });
const expiry = (expires: string | null, keyId = KEY): ApiKeyCommand => ({ type: 'ChangeApiKeyExpiry', keyId, expires, at: LATER });

test('issuing a key records it, enabled, with its hash and permissions', () => {
  given([]).when(issue).then([issued]);
  const { at: _at, ...rest } = issuedData;
  assert.equal(given([]).when(issue).state(), { exists: true, ...rest, allApps: false, status: 'enabled', created: AT });
});

test('issuing an id that exists is a conflict', () => {
  given([issued]).when(issue).thenThrows(ConflictError);
});

test('disabling an enabled key records ApiKeyDisabled', () => {
  given([issued])
    .when(cmd('DisableApiKey'))
    .then([{ type: 'ApiKeyDisabled', data: { keyId: KEY, at: LATER } }]);
});

test('disabling twice is not an error and records nothing the second time', () => {
  given([issued, disabled]).when(cmd('DisableApiKey')).thenNothing();
});

test('enabling a disabled key records ApiKeyEnabled; enabling an enabled key records nothing', () => {
  given([issued, disabled])
    .when(cmd('EnableApiKey'))
    .then([{ type: 'ApiKeyEnabled', data: { keyId: KEY, at: LATER } }]);
  given([issued]).when(cmd('EnableApiKey')).thenNothing();
  given([issued, disabled, enabled]).when(cmd('EnableApiKey')).thenNothing();
});

test('revoking records ApiKeyRevoked, from enabled or disabled; twice records nothing', () => {
  given([issued])
    .when(cmd('RevokeApiKey'))
    .then([{ type: 'ApiKeyRevoked', data: { keyId: KEY, at: LATER } }]);
  given([issued, disabled])
    .when(cmd('RevokeApiKey'))
    .then([{ type: 'ApiKeyRevoked', data: { keyId: KEY, at: LATER } }]);
  given([issued, revoked]).when(cmd('RevokeApiKey')).thenNothing();
});

test('a revoked key cannot be enabled again (ConflictError), nor disabled, nor given a new expiry', () => {
  given([issued, revoked])
    .when(cmd('EnableApiKey'))
    .thenThrows(ConflictError, /revoked/);
  given([issued, revoked])
    .when(cmd('DisableApiKey'))
    .thenThrows(ConflictError, /revoked/);
  given([issued, revoked])
    .when(expiry(LATER))
    .thenThrows(ConflictError, /revoked/);
});

test('an unknown key is NotFoundError for every change', () => {
  for (const type of ['DisableApiKey', 'EnableApiKey', 'RevokeApiKey'] as const) {
    given([])
      .when(cmd(type, 'nosuchkey000000'))
      .thenThrows(NotFoundError, /nosuchkey000000/);
  }
  given([]).when(expiry(LATER, 'nosuchkey000000')).thenThrows(NotFoundError);
});

test('changing the expiry records it; the same expiry again records nothing', () => {
  given([issued])
    .when(expiry(LATER))
    .then([{ type: 'ApiKeyExpiryChanged', data: { keyId: KEY, expires: LATER, at: LATER } }]);
  given([issued]).when(expiry(null)).thenNothing();
  const withExpiry: ApiKeyEvent = { type: 'ApiKeyExpiryChanged', data: { keyId: KEY, expires: LATER, at: AT } };
  given([issued, withExpiry]).when(expiry(LATER)).thenNothing();
  given([issued, withExpiry])
    .when(expiry(null))
    .then([{ type: 'ApiKeyExpiryChanged', data: { keyId: KEY, expires: null, at: LATER } }]);
});

test('the state follows the key through disable, enable, expiry and revoke', () => {
  const after = (history: ApiKeyEvent[]) => given(history).when(cmd('RevokeApiKey')).state();
  const state = after([issued, disabled, enabled, { type: 'ApiKeyExpiryChanged', data: { keyId: KEY, expires: LATER, at: AT } }]);
  assert.ok(state.exists);
  if (state.exists) {
    assert.is(state.status, 'revoked');
    assert.is(state.expires, LATER);
    assert.is(state.created, AT);
    assert.equal(state.permissions, ['points:edit', 'vip:read']);
  }
});

test.run();
