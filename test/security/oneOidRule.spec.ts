// One oId rule everywhere (decimal digits, no leading zero, at most 19): a user is never two
// ("00333" beside "333"), and an id the platform never issues (3,000 digits) is refused at
// sign-in as in every request and at the CLI, like anything else in an oId's place (a name, a
// lone surrogate, a path). A medal's icon is an http(s) URL only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { callback, connect, platformAssertion, startLogin } from '../support/streamsAndSignIn.js';
import { cli } from '../support/serviceProcess.js';

const ATTR = 'backcolor=ffffff&fontcolor=000000';

test('an oId with a leading zero or more than 19 digits is refused in bodies, paths and push lists', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['*']);
    for (const oId of ['0333', '00333', '0', '1'.repeat(20), '1'.repeat(3000)]) {
      const edit = await h.post('/adm/points/edit', { oId, point: 1, memo: 'm' }, key);
      assert.is(edit.status, 400, `${oId.slice(0, 30)}: ${edit.text.slice(0, 200)}`);
      assert.match(edit.body.message, /^oId: must be the platform's user id \(digits with no leading zero, at most 19\)/);
      const read = await h.get(`/adm/vip/${oId}`, key);
      assert.is(read.status, 400, oId.slice(0, 30));
      const push = await h.post('/adm/message/push', { oIds: [oId], name: 'n', data: {} }, key);
      assert.is(push.status, 400, oId.slice(0, 30));
    }
    assert.is((await h.post('/adm/items/query', { oId: '1'.repeat(19) }, key)).status, 404, 'nineteen digits is an id (of nobody here)');
  } finally {
    await h.close();
  }
});

test('a sign-in whose identity names an id the platform would not issue signs nobody in', async () => {
  const h = await startHarness();
  try {
    // The platform (here, the simulator) asserting an identity with a leading zero: refused all the same.
    h.sim.addUser({ oId: '00333', userName: 'zeros' });
    h.sim.addUser({ oId: '333', userName: 'three' });
    const { stream, clientId } = await connect(h);
    const res = await callback(await platformAssertion(await startLogin(h, clientId), '00333'));
    assert.is(res.status, 403, res.text);
    assert.is(res.cookie, undefined);
    assert.is(h.service.deps.readModels.users.byOid('00333'), undefined, 'no second user beside 333');
    stream.close();
  } finally {
    await h.close();
  }
});

test('a medal icon must be an http(s) URL', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['*']);
    for (const url of ['javascript:alert(1)', 'data:image/svg+xml,<svg/onload=alert(1)>', '//evil.example/x.png', 'ftp://files.example/x.png']) {
      const res = await h.post('/adm/medal/give', { oId: '1630399136785', name: 'n', description: 'd', attr: `url=${url}&${ATTR}` }, key);
      assert.is(res.status, 400, `${url}: ${res.text}`);
      assert.match(res.body.message, /^attr: /);
    }
    const ok = await h.post('/adm/medal/give', { oId: '1630399136785', name: 'n', description: 'd', attr: `url=https://example.test/m.png&${ATTR}` }, key);
    assert.is(ok.status, 200, ok.text);
  } finally {
    await h.close();
  }
});

test('the CLI takes oIds by the same rule', async () => {
  const h = await startHarness();
  try {
    for (const oId of ['alice', '00333', '1'.repeat(20)]) {
      const run = await cli(h.dataDir, 'audit', 'points', oId);
      assert.is(run.code, 1, `${oId}: ${run.stdout}`);
      assert.match(run.stderr, /oId must be the platform's user id \(digits with no leading zero, at most 19\)/);
    }
  } finally {
    await h.close();
  }
});

test('oIds that are not the platform’s ids are refused with 400 naming oId, in bodies, paths and push lists', async () => {
  const h = await startHarness();
  try {
    const { key } = await h.key(['*']);
    const bodies: Array<[string, string]> = [
      ['/adm/points/edit', '{"oId":"\\ud800","point":1,"memo":"m"}'],
      ['/adm/points/edit', '{"oId":"alice","point":1,"memo":"m"}'],
      ['/adm/items/query', '{"oId":"1630399136785/../x"}'],
      ['/adm/vip/submit', `{"oId":"${'9'.repeat(21)}","quality":"vip","expired":"2030-01-01 00:00:00"}`],
    ];
    for (const [path, raw] of bodies) {
      const res = await h.request('POST', path, { raw, apiKey: key });
      assert.is(res.status, 400, `${path} ${raw}: ${res.text}`);
      assert.match(res.body.message, /^oId: must be the platform's user id/);
    }
    const push = await h.request('POST', '/adm/message/push', { raw: '{"oIds":["1","\\udfff"],"name":"n","data":{}}', apiKey: key });
    assert.is(push.status, 400, push.text);
    assert.match(push.body.message, /^oIds\.1: must be the platform's user id/);
    for (const path of ['/adm/vip/%ED%A0%80', '/adm/liveness/abc', '/adm/audit/points/x1', '/adm/audit/vip/%F0%9F%98%80']) {
      const res = await h.get(path, key);
      assert.is(res.status, 400, `${path}: ${res.text}`);
      assert.match(res.body.message, /^oId: /);
    }
    assert.is((await h.post('/adm/items/query', { oId: ALICE.oId }, key)).status, 200, 'a real id still works');
  } finally {
    await h.close();
  }
});

test.run();
