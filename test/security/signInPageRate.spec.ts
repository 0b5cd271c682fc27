// A flood of sign-in pages is refused before it costs the node a page: past SIGN_IN_PAGES_BURST
// pages at once (then SIGN_IN_PAGES_PER_SECOND), an address gets a 429 page with Retry-After,
// while other addresses and the admin API go on as before; past SIGN_IN_PAGES_PER_NODE_PER_SECOND
// from all addresses together, the node sheds sign-in pages and the admin API goes on.
import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenBuckets } from '../../src/http/tokenBuckets.js';
import { startHarness } from '../support/harness.js';
import { connect } from '../support/streamsAndSignIn.js';

/** A GET from a chosen loopback address (127.0.0.0/8 is all this host's). */
function getFrom(
  url: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

function counts(statuses: number[]): Record<number, number> {
  const n: Record<number, number> = {};
  for (const s of statuses) n[s] = (n[s] ?? 0) + 1;
  return n;
}

test('an address past its burst of login pages gets 429 pages; another address and the API do not notice', async () => {
  const h = await startHarness({ env: { SIGN_IN_PAGES_PER_SECOND: '0.01', SIGN_IN_PAGES_BURST: '20' } });
  try {
    const { key } = await h.key(['user:get']);
    const { stream, clientId } = await connect(h);
    const page = `${h.url}/fishpi/login?client_id=${clientId}`;
    const head = await h.service.deps.store.headPosition();
    const flood = await Promise.all(Array.from({ length: 60 }, () => getFrom(page, '127.0.0.1')));
    assert.equal(counts(flood.map((r) => r.status)), { 200: 20, 429: 40 });
    const refusal = flood.find((r) => r.status === 429)!;
    assert.ok(Number(refusal.headers['retry-after']) >= 1, 'Retry-After in seconds');
    assert.match(String(refusal.headers['content-type']), /^text\/html/);
    assert.is(refusal.headers['cache-control'], 'no-store');
    assert.match(refusal.text, /Too many sign-in pages/);
    // The callback shares the bucket: a forged state from the same address is not even read.
    assert.is((await getFrom(`${h.url}/fishpi/callback?state=x`, '127.0.0.1')).status, 429);

    assert.is((await getFrom(page, '127.0.0.2')).status, 200, 'another address has its own bucket');
    assert.is((await h.get(`/adm/user/get?client_id=${clientId}`, key)).status, 200, 'the admin API is not bounded by it');
    assert.is(await h.service.deps.store.headPosition(), head, 'nothing was recorded');

    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    assert.match(metrics, /^sign_in_pages_refused_total\{bound="address"\} 41$/m);
    stream.close();
  } finally {
    await h.close();
  }
});

test('behind a trusted proxy the bucket is the forwarded address, not the proxy', async () => {
  const h = await startHarness({ env: { TRUST_PROXY: 'true', SIGN_IN_PAGES_PER_SECOND: '0.01', SIGN_IN_PAGES_BURST: '2' } });
  try {
    const { stream, clientId } = await connect(h);
    const page = `${h.url}/fishpi/login?client_id=${clientId}`;
    const from = async (forwarded: string) => (await getFrom(page, '127.0.0.1', { 'X-Forwarded-For': forwarded })).status;
    assert.equal([await from('203.0.113.7'), await from('203.0.113.7'), await from('203.0.113.7')], [200, 200, 429]);
    // Entries left of the proxy's are what the client wrote: they choose no bucket.
    assert.is(await from('198.51.100.1, 203.0.113.7'), 429);
    assert.is(await from('203.0.113.8'), 200);
    stream.close();
  } finally {
    await h.close();
  }
});

test("a flood over many addresses, each within its bound, is shed at the node's bound", async () => {
  const h = await startHarness({ env: { SIGN_IN_PAGES_PER_SECOND: '0.01', SIGN_IN_PAGES_BURST: '2', SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0.01' } });
  try {
    const { key } = await h.key(['user:get']);
    const { stream, clientId } = await connect(h);
    // The node's burst is one (a second's worth of 0.01/s, rounded up): one page, then refusals.
    const statuses = [];
    for (let i = 2; i < 7; i++) statuses.push((await getFrom(`${h.url}/fishpi/login?client_id=${clientId}`, `127.0.0.${i}`)).status);
    assert.equal(statuses, [200, 429, 429, 429, 429]);
    assert.is((await h.get(`/adm/user/get?client_id=${clientId}`, key)).status, 200, 'the admin API is not shed');
    assert.match(await (await fetch(`${h.url}/metrics`)).text(), /^sign_in_pages_refused_total\{bound="node"\} 4$/m);
    stream.close();
  } finally {
    await h.close();
  }
});

test('SIGN_IN_PAGES_PER_SECOND=0 and SIGN_IN_PAGES_PER_NODE_PER_SECOND=0 turn the bounds off', async () => {
  const h = await startHarness({ env: { SIGN_IN_PAGES_PER_SECOND: '0', SIGN_IN_PAGES_BURST: '1', SIGN_IN_PAGES_PER_NODE_PER_SECOND: '0' } });
  try {
    const { stream, clientId } = await connect(h);
    const statuses = await Promise.all(Array.from({ length: 10 }, async () => (await getFrom(`${h.url}/fishpi/login?client_id=${clientId}`, '127.0.0.1')).status));
    assert.equal(counts(statuses), { 200: 10 });
    stream.close();
  } finally {
    await h.close();
  }
});

test('buckets refill at the rate, and the addresses remembered are bounded', () => {
  const buckets = new TokenBuckets({ perSecond: 2, burst: 3 }, 100);
  assert.equal(
    [0, 1, 2, 3].map(() => buckets.take('a', 0)),
    [0, 0, 0, 1],
    'the burst, then a second to wait',
  );
  assert.is(buckets.take('a', 499), 1, 'not yet a whole token back');
  assert.is(buckets.take('a', 1000), 0, 'a token every half second');
  for (let i = 0; i < 1000; i++) buckets.take(`flood-${i}`, 1000);
  assert.is(buckets.size, 100, 'the oldest addresses are forgotten, never more than the bound');
});

test.run();
