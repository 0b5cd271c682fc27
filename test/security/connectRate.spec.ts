// Attack: connect and leave in a loop. Each address may open REALTIME_CONNECTS_BURST streams at
// once and then REALTIME_CONNECTS_PER_SECOND (429 with Retry-After past it), the node
// REALTIME_CONNECTS_PER_NODE_PER_SECOND from all addresses together (503): refused before koa,
// recording nothing. What this leaves in the log over time is anonymousChurn.spec.ts.
import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startHarness, type Harness } from '../support/harness.js';

interface Opened {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** GET /api/realtime from `localAddress` (and `forwarded` as X-Forwarded-For), closed once its answer begins. */
function open(h: Harness, localAddress: string, forwarded?: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = request(`${h.url}/api/realtime`, { agent: false, localAddress, headers: forwarded ? { 'X-Forwarded-For': forwarded } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.once('data', (chunk: string) => {
        body = chunk;
        req.destroy();
        resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const connects = async (h: Harness) => (await h.events('client-')).filter((e) => e.type === 'ClientConnected').length;

test('an address past its burst of connects gets 429 with Retry-After, recorded nowhere; another address connects', async () => {
  const h = await startHarness({ env: { REALTIME_CONNECTS_BURST: '5', REALTIME_CONNECTS_PER_SECOND: '0.01' } });
  try {
    const answers: Opened[] = [];
    for (let i = 0; i < 8; i++) answers.push(await open(h, '127.0.0.1'));
    assert.equal(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 429, 429, 429],
    );
    const refused = answers[5]!;
    assert.ok(Number(refused.retryAfter) >= 1, 'Retry-After in seconds');
    assert.equal(JSON.parse(refused.body).data.reason, 'too_many_connections');
    assert.is((await open(h, '127.0.0.2')).status, 200, 'another address has its own bucket');
    assert.is(await connects(h), 6, 'the refused connects recorded nothing');
    assert.match(await (await fetch(`${h.url}/metrics`)).text(), /^realtime_connects_refused_total\{bound="address"\} 3$/m);
  } finally {
    await h.close();
  }
});

test('past the node’s rate of connects every address gets 503 with Retry-After', async () => {
  // Ten seconds' worth at once: 2 connects.
  const h = await startHarness({ env: { TRUST_PROXY: 'true', REALTIME_CONNECTS_PER_NODE_PER_SECOND: '0.2' } });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await open(h, '127.0.0.1', `198.51.100.${i + 1}`)).status);
    assert.equal(statuses, [200, 200, 503, 503]);
    const refused = await open(h, '127.0.0.1', '198.51.100.99');
    assert.equal(JSON.parse(refused.body).data, { reason: 'unavailable', retryAfterSeconds: Number(refused.retryAfter) });
    assert.is(await connects(h), 2);
  } finally {
    await h.close();
  }
});

test.run();
