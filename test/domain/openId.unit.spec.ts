// Reading a positive OpenID 2.0 assertion as a relying party (src/domain/openId.ts): what passes
// is exactly what is forwarded; each rule refuses on its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readAssertion } from '../../src/domain/openId.js';

const BASE = 'https://fishpi.example';
const expected = { opEndpoint: `${BASE}/openid`, identityPattern: /^https:\/\/fishpi\.example\/openid\/id\/(\d+)$/, returnTo: `https://bridge.example/fishpi/callback?state=s` };
const genuine = {
  state: 's',
  'openid.ns': 'http://specs.openid.net/auth/2.0',
  'openid.mode': 'id_res',
  'openid.op_endpoint': `${BASE}/openid`,
  'openid.claimed_id': `${BASE}/openid/id/42`,
  'openid.identity': `${BASE}/openid/id/42`,
  'openid.return_to': expected.returnTo,
  'openid.response_nonce': '2026-01-01T00:00:00Zabc',
  'openid.assoc_handle': 'h',
  'openid.signed': 'op_endpoint,claimed_id,identity,return_to,response_nonce,assoc_handle',
  'openid.sig': 'c2ln',
};

const problem = (query: Record<string, string | string[] | undefined>) => {
  const reading = readAssertion(query, expected);
  return reading.ok ? undefined : reading.problem;
};

test('a genuine assertion: its oId, and every openid field (extensions too, nothing else) to forward', () => {
  const withExtension = { ...genuine, 'openid.ns.sreg': 'http://openid.net/extensions/sreg/1.1', 'openid.sreg.nickname': 'n' };
  const reading = readAssertion(withExtension, expected);
  assert.ok(reading.ok);
  if (!reading.ok) return;
  assert.is(reading.oId, '42');
  const { state: _state, ...fields } = withExtension;
  assert.equal(reading.fields, fields);
});

test('each rule refuses on its own', () => {
  const cases: Array<[string, Record<string, string | string[] | undefined>, RegExp]> = [
    ['newline in a name', { ...genuine, 'openid.a\nb': 'x' }, /not an OpenID field name/],
    ['colon in a name', { ...genuine, 'openid.a:b': 'x' }, /not an OpenID field name/],
    ['empty name', { ...genuine, 'openid.': 'x' }, /not an OpenID field name/],
    ['repeated', { ...genuine, 'openid.identity': [genuine['openid.identity'], genuine['openid.identity']] }, /repeated/],
    ['newline in a value', { ...genuine, 'openid.assoc_handle': 'h\nclaimed_id:x' }, /newline/],
    ['carriage return in a value', { ...genuine, 'openid.sreg.x': 'a\rb' }, /newline/],
    ['too long a value', { ...genuine, 'openid.sreg.x': 'a'.repeat(4097) }, /too long/],
    ['too many fields', { ...genuine, ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`openid.x.f${i}`, 'v'])) }, /too many/],
    ['another ns', { ...genuine, 'openid.ns': 'http://openid.net/signon/1.1' }, /ns/],
    ['mode', { ...genuine, 'openid.mode': 'cancel' }, /mode/],
    ['op_endpoint', { ...genuine, 'openid.op_endpoint': 'https://evil.example/openid' }, /op_endpoint/],
    ['identity differs', { ...genuine, 'openid.identity': `${BASE}/openid/id/43` }, /differ/],
    ['foreign identity', { ...genuine, 'openid.identity': 'https://evil.example/openid/id/1', 'openid.claimed_id': 'https://evil.example/openid/id/1' }, /not an identity/],
    ['return_to', { ...genuine, 'openid.return_to': 'https://bridge.example/fishpi/callback?state=t' }, /return_to/],
    ['no sig', { ...genuine, 'openid.sig': undefined }, /sig/],
    ['signed twice', { ...genuine, 'openid.signed': `${genuine['openid.signed']},identity` }, /twice/],
    ['signed field not received', { ...genuine, 'openid.signed': `${genuine['openid.signed']},sreg.email` }, /not received/],
    ['signed name with a newline', { ...genuine, 'openid.signed': `${genuine['openid.signed']},a\nb` }, /newline/],
  ];
  for (const [name, query, expectedProblem] of cases) assert.match(problem(query) ?? 'accepted', expectedProblem, name);
  for (const field of ['op_endpoint', 'return_to', 'response_nonce', 'assoc_handle', 'claimed_id', 'identity']) {
    const signed = genuine['openid.signed']
      .split(',')
      .filter((f) => f !== field)
      .join(',');
    assert.is(problem({ ...genuine, 'openid.signed': signed }), `openid.signed leaves out ${field}`);
  }
});

test.run();
