// Attack: a page on a name the attacker controls that resolves to the service (DNS rebinding, or
// any alias) sends cookie-authenticated writes whose Origin is `http://<the Host header>`: the
// service took that for its own origin. The console's changes and `POST /api/logout` accept
// PUBLIC_URL's origin and (logout only) CORS_ORIGINS, never one made of the request's Host.
import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consoleGet, signInOperator } from '../console/operatorSignIn.js';
import { ALICE, withHarness } from '../support/harness.js';

const ALIAS = 'rebound.example:8443';

/** A POST as a browser on `http://<host>` sends it to the service reached under that name. */
function postAs(url: string, path: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', agent: false, headers: { Host: host, Origin: `http://${host}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a console change whose Origin is http://<its own Host header> is refused (403) and changes nothing', () =>
  withHarness({ CONSOLE_ADMINS: ALICE.oId, CORS_ORIGINS: 'https://game.example' }, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const refused = await postAs(h.url, '/console/api/logout', ALIAS, { Cookie: operator.cookie, 'X-Console-Token': operator.token });
    assert.is(refused.status, 403, refused.body);
    assert.match(refused.body, `Origin http://${ALIAS} may not make this request`);
    assert.is((await consoleGet(h, operator, '/console/api/me')).status, 200, 'still signed in');
    const own = await postAs(h.url, '/console/api/logout', new URL(h.url).host, { Cookie: operator.cookie, 'X-Console-Token': operator.token });
    assert.is(own.status, 200, 'from PUBLIC_URL’s origin it goes through');
  }));

test('POST /api/logout whose Origin is http://<its own Host header> is refused (403); PUBLIC_URL and CORS_ORIGINS still may', () =>
  withHarness({ CORS_ORIGINS: 'https://game.example' }, async (h) => {
    const refused = await postAs(h.url, '/api/logout', ALIAS);
    assert.is(refused.status, 403, refused.body);
    assert.match(refused.body, `Origin http://${ALIAS} may not make this request`);
    assert.is((await postAs(h.url, '/api/logout', new URL(h.url).host)).status, 200, 'PUBLIC_URL’s origin');
    assert.is((await h.request('POST', '/api/logout', { headers: { Origin: 'https://game.example' } })).status, 200, 'a CORS_ORIGINS page');
  }));

test.run();
