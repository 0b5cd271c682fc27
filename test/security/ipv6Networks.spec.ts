// Attack: rotate through the addresses of one IPv6 /64 (behind TRUST_PROXY, by X-Forwarded-For)
// to lift every per-address bound (sign-in pages, streams, connects; sockets are counted by the
// same function, test/http/clientAddress.unit.spec.ts). Each /64 counts as one address (CLIENT_IPV6_PREFIX_LENGTH), an
// IPv4-mapped address as its IPv4 address; a player in another /64 is not held back.
import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startHarness } from '../support/harness.js';
import { connect } from '../support/streamsAndSignIn.js';

/** An address of 2001:db8:1:2::/64 that no earlier call returned. */
let rotation = 0;
const inOneNetwork = () => `2001:db8:1:2:${(++rotation).toString(16)}:${(rotation * 7).toString(16)}:0:1`;

function getFrom(url: string, forwarded: string): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { 'X-Forwarded-For': forwarded } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

test('sign-in pages: rotating addresses inside one /64 share one bucket; a player in another /64 is served', async () => {
  const h = await startHarness({ env: { TRUST_PROXY: 'true', SIGN_IN_PAGES_PER_SECOND: '0.01', SIGN_IN_PAGES_BURST: '5' } });
  try {
    const { stream, clientId } = await connect(h);
    const page = `${h.url}/fishpi/login?client_id=${clientId}`;
    const flood: number[] = [];
    for (let i = 0; i < 20; i++) flood.push((await getFrom(page, inOneNetwork())).status);
    assert.equal(flood, [...Array(5).fill(200), ...Array(15).fill(429)]);
    assert.is((await getFrom(page, '2001:db8:1:3::1')).status, 200, 'the next /64 has its own bucket');
    assert.is((await getFrom(page, '198.51.100.20')).status, 200);
    stream.close();
  } finally {
    await h.close();
  }
});

test('sign-in pages: an IPv4-mapped address is counted as its IPv4 address', async () => {
  const h = await startHarness({ env: { TRUST_PROXY: 'true', SIGN_IN_PAGES_PER_SECOND: '0.01', SIGN_IN_PAGES_BURST: '2' } });
  try {
    const { stream, clientId } = await connect(h);
    const page = `${h.url}/fishpi/login?client_id=${clientId}`;
    const statuses = [await getFrom(page, '198.51.100.9'), await getFrom(page, '::ffff:198.51.100.9'), await getFrom(page, '::ffff:c633:6409')];
    assert.equal(
      statuses.map((s) => s.status),
      [200, 200, 429],
    );
    stream.close();
  } finally {
    await h.close();
  }
});

test('realtime connects: the per-address rate holds for a whole /64', async () => {
  const h = await startHarness({ env: { TRUST_PROXY: 'true', REALTIME_CONNECTS_BURST: '3', REALTIME_CONNECTS_PER_SECOND: '0.01' } });
  try {
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await getFrom(`${h.url}/api/realtime`, inOneNetwork()));
    assert.equal(
      streams.map((s) => s.status),
      [200, 200, 200, 429, 429],
    );
    const elsewhere = await getFrom(`${h.url}/api/realtime`, '2001:db8:9::1');
    assert.is(elsewhere.status, 200, 'another network has its own bucket');
    for (const s of [...streams, elsewhere]) s.close();
  } finally {
    await h.close();
  }
});

test('realtime streams: the per-address cap holds for a whole /64; CLIENT_IPV6_PREFIX_LENGTH=128 counts single addresses', async () => {
  for (const [prefix, expected] of [
    ['64', [200, 200, 200, 429, 429]],
    ['128', [200, 200, 200, 200, 200]],
  ] as const) {
    const h = await startHarness({ env: { TRUST_PROXY: 'true', REALTIME_MAX_CONNECTIONS_PER_IP: '3', REALTIME_CONNECTS_PER_SECOND: '0', CLIENT_IPV6_PREFIX_LENGTH: prefix } });
    try {
      const streams = [];
      for (let i = 0; i < 5; i++) streams.push(await getFrom(`${h.url}/api/realtime`, inOneNetwork()));
      assert.equal(
        streams.map((s) => s.status),
        expected,
        `prefix /${prefix}`,
      );
      const elsewhere = await getFrom(`${h.url}/api/realtime`, '2001:db8:9::1');
      assert.is(elsewhere.status, 200, 'another network has its own slots');
      for (const s of [...streams, elsewhere]) s.close();
    } finally {
      await h.close();
    }
  }
});

test.run();
