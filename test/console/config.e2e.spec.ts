// CONSOLE_ADMINS turns the console on; without it no /console path exists.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.js';
import { withHarness } from '../support/harness.js';

test('CONSOLE_ADMINS unset or empty: the console is off', () => {
  assert.is(loadConfig({}).console, undefined);
  assert.is(loadConfig({ CONSOLE_ADMINS: ' , ' }).console, undefined);
});

test('CONSOLE_ADMINS lists oIds; console sessions last 8 hours unless CONSOLE_SESSION_TTL_MINUTES says otherwise', () => {
  assert.equal(loadConfig({ CONSOLE_ADMINS: '1630399136785, 42' }).console, { admins: ['1630399136785', '42'], sessionTtlMs: 8 * 3_600_000, liveReload: false });
  assert.is(loadConfig({ CONSOLE_ADMINS: '42', CONSOLE_LIVE_RELOAD: 'true' }).console?.liveReload, true);
  assert.is(loadConfig({ CONSOLE_ADMINS: '42', CONSOLE_SESSION_TTL_MINUTES: '15' }).console?.sessionTtlMs, 15 * 60_000);
});

test('a value that is no list of oIds stops start-up naming the variable', () => {
  assert.throws(() => loadConfig({ CONSOLE_ADMINS: '42;43' }), (error: Error) => error instanceof ConfigError && /CONSOLE_ADMINS: must be comma-separated oIds/.test(error.message));
  assert.throws(() => loadConfig({ CONSOLE_ADMINS: '42', CONSOLE_SESSION_TTL_MINUTES: '0' }), (error: Error) => /CONSOLE_SESSION_TTL_MINUTES/.test(error.message));
});

test('with the console off, every /console path answers 404', () =>
  withHarness({}, async (h) => {
    for (const path of ['/console', '/console/', '/console/login', '/console/callback', '/console/api/me', '/console/assets/console.js']) {
      const res = await h.get(path);
      assert.is(res.status, 404, path);
    }
    assert.is((await h.request('POST', '/console/api/logout')).status, 404);
  }));

test.run();
