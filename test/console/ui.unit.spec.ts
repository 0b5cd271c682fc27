// The console front-end's rules that need no browser: how a time reads, and what the new-key form
// must hold before it is sent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { when } from '../../src/console/ui/format.js';
import { EMPTY_KEY_FORM, keyBody, keyFormProblems, problemText } from '../../src/console/ui/keyForm.js';

test('a time reads in UTC, to the second, and says so', () => {
  assert.is(when('2026-11-26T13:05:52.123Z'), '2026-11-26 13:05:52 UTC');
  assert.is(when('2026-11-26T14:05:52+01:00'), '2026-11-26 13:05:52 UTC');
  assert.is(when(null), '—');
  assert.is(when(undefined), '—');
});

test('an empty key form names each field it lacks', () => {
  const problems = keyFormProblems(EMPTY_KEY_FORM);
  assert.equal(Object.keys(problems).sort(), ['appId', 'permissions']);
  assert.match(problemText('appId', problems.appId!), /^App id: is required/);
  assert.is(problemText('permissions', problems.permissions!), 'Permissions: must name at least one permission');
});

test('a key form is checked by the service’s rules: the app id’s form, the name’s length, the expiry’s form', () => {
  const form = { ...EMPTY_KEY_FORM, appId: 'My Game', app: 'x'.repeat(81), permissions: ['vip:read'], expires: '2027-02-30 00:00:00' };
  const problems = keyFormProblems(form);
  assert.match(problems.appId!, /^must be 1 to 64 of a-z/);
  assert.is(problems.app, 'must be at most 80 characters');
  assert.match(problems.expires!, /YYYY-MM-DD HH:MM:SS/);
  assert.is(problems.permissions, undefined);
});

test('a complete key form has no problem and is sent trimmed, with no expiry as null', () => {
  const form = { ...EMPTY_KEY_FORM, appId: ' my-game ', app: ' My Game ', permissions: ['*'], expires: ' ' };
  assert.equal(keyFormProblems(form), {});
  assert.equal(keyBody(form), { appId: 'my-game', app: 'My Game', allApps: false, permissions: ['*'], expires: null });
  assert.equal(keyFormProblems({ ...form, expires: '2027-01-01 00:00:00' }), {});
});

test.run();
