// CONSOLE_ADMINS turns the console on; without it no /console path exists, and a browser that
// opens one is told how to turn it on.
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
  assert.throws(
    () => loadConfig({ CONSOLE_ADMINS: '42;43' }),
    (error: Error) => error instanceof ConfigError && /CONSOLE_ADMINS: must be comma-separated oIds/.test(error.message),
  );
  assert.throws(
    () => loadConfig({ CONSOLE_ADMINS: '42', CONSOLE_SESSION_TTL_MINUTES: '0' }),
    (error: Error) => /CONSOLE_SESSION_TTL_MINUTES/.test(error.message),
  );
});

test('with the console off, every /console path answers 404', () =>
  withHarness({}, async (h) => {
    for (const path of ['/console', '/console/', '/console/login', '/console/callback', '/console/api/me', '/console/assets/console.js']) {
      const res = await h.get(path);
      assert.is(res.status, 404, path);
    }
    assert.is((await h.request('POST', '/console/api/logout')).status, 404);
  }));

/** What a browser's Accept says when it opens a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

test('with the console off, a browser opening /console gets a 404 page saying how to turn it on; JSON clients get the JSON 404', () =>
  withHarness({}, async (h) => {
    for (const path of ['/console', '/console/', '/console/keys']) {
      const page = await h.request('GET', path, { headers: { Accept: BROWSER_ACCEPT } });
      assert.is(page.status, 404, path);
      assert.match(page.headers.get('content-type')!, /^text\/html/, path);
      assert.match(page.text, /The operator console is off/);
      assert.match(page.text, /<code>CONSOLE_ADMINS<\/code> to the comma-separated oIds of the operators/);
      assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/, 'the page loads nothing');
    }
    const json = await h.request('GET', '/console/', { headers: { Accept: 'application/json' } });
    assert.is(json.status, 404);
    assert.is(json.body.data.reason, 'route_not_found');
    const elsewhere = await h.request('GET', '/consoles', { headers: { Accept: BROWSER_ACCEPT } });
    assert.is(elsewhere.body?.data.reason, 'route_not_found', 'only /console paths');
  }));

test('with the console on, /console/ is the console whatever the Accept', () =>
  withHarness({ CONSOLE_ADMINS: '42' }, async (h) => {
    const page = await h.request('GET', '/console/', { headers: { Accept: BROWSER_ACCEPT } });
    assert.is(page.status, 200);
    assert.match(page.text, /<div id="app">/);
  }));

test.run();
