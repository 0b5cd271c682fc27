// Attack: open stream after stream from one address (or many spoofed ones) until the node runs
// out of sockets and memory. Each address gets REALTIME_MAX_CONNECTIONS_PER_IP streams (429 with
// Retry-After past it), the node REALTIME_MAX_CONNECTIONS (503); a refused stream records nothing.
import { request, type IncomingMessage } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeOpenFiles, maxConnectionsFor, openFilesLimits, openFilesSoftLimit } from '../../src/openFilesLimit.js';
import { loadConfig } from '../../src/config.js';
import { eventually } from '../support/eventually.js';
import { startHarness, type Harness } from '../support/harness.js';

interface RawStream {
  status: number;
  retryAfter: string | undefined;
  close(): void;
}

/** GET /api/realtime on a socket of its own; resolves once the status line is in. */
function openRaw(h: Harness, headers: Record<string, string> = {}): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${h.url}/api/realtime`, { agent: false, headers }, (res: IncomingMessage) => {
      res.resume();
      resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

const connects = async (h: Harness) => (await h.events('client-')).filter((e) => e.type === 'ClientConnected').length;

async function closeAll(h: Harness, streams: RawStream[]) {
  const before = (await h.events('client-')).filter((e) => e.type === 'ClientDisconnected').length;
  const open = streams.filter((s) => s.status === 200).length;
  for (const s of streams) s.close();
  // Wait for the disconnects, so that closing the service has nothing left in flight.
  await eventually(async () => (await h.events('client-')).filter((e) => e.type === 'ClientDisconnected').length - before >= open, `${open} disconnects to be recorded`);
}

test('250 streams from one address with the default cap: 200 are served, 50 get 429 with Retry-After and record nothing', async () => {
  // Opened as fast as they are answered: the rate of connects (connectRate.spec.ts) is not what this is about.
  const h = await startHarness({ env: { REALTIME_CONNECTS_PER_SECOND: '0' } });
  try {
    const streams: RawStream[] = [];
    for (let i = 0; i < 250; i++) streams.push(await openRaw(h));
    const served = streams.filter((s) => s.status === 200).length;
    const refused = streams.filter((s) => s.status === 429);
    assert.is(served, 200);
    assert.is(refused.length, 50);
    assert.ok(
      refused.every((s) => Number(s.retryAfter) > 0),
      'Retry-After on every refusal',
    );
    assert.is(await connects(h), 200, 'only served streams are recorded');
    await closeAll(h, streams);
  } finally {
    await h.close();
  }
});

test('past a small per-address cap the next stream is refused; closing one frees its slot', async () => {
  const h = await startHarness({ env: { REALTIME_MAX_CONNECTIONS_PER_IP: '5' } });
  try {
    const streams: RawStream[] = [];
    for (let i = 0; i < 5; i++) streams.push(await openRaw(h));
    assert.ok(streams.every((s) => s.status === 200));
    const sixth = await openRaw(h);
    assert.is(sixth.status, 429);
    streams[0]!.close();
    const again = await eventually(async () => {
      const stream = await openRaw(h);
      return stream.status === 200 ? stream : undefined;
    }, 'a closed stream to give its slot back (a stream answered 200)');
    await closeAll(h, [...streams.slice(1), again]);
  } finally {
    await h.close();
  }
});

test('past the per-node cap every address gets 503 with Retry-After', async () => {
  const h = await startHarness({ env: { REALTIME_MAX_CONNECTIONS: '3', TRUST_PROXY: 'true' } });
  try {
    const streams: RawStream[] = [];
    for (let i = 0; i < 3; i++) streams.push(await openRaw(h, { 'X-Forwarded-For': `198.51.100.${i + 1}` }));
    assert.ok(streams.every((s) => s.status === 200));
    const fourth = await openRaw(h, { 'X-Forwarded-For': '198.51.100.99' });
    assert.is(fourth.status, 503);
    assert.ok(Number(fourth.retryAfter) > 0);
    await closeAll(h, streams);
  } finally {
    await h.close();
  }
});

test('X-Forwarded-For spoofing: without TRUST_PROXY the header is ignored and the socket address is capped', async () => {
  const h = await startHarness({ env: { REALTIME_MAX_CONNECTIONS_PER_IP: '2' } });
  try {
    const streams: RawStream[] = [];
    for (let i = 0; i < 3; i++) streams.push(await openRaw(h, { 'X-Forwarded-For': `203.0.113.${i + 1}` }));
    assert.equal(
      streams.map((s) => s.status),
      [200, 200, 429],
    );
    await closeAll(h, streams);
  } finally {
    await h.close();
  }
});

test('X-Forwarded-For spoofing behind a trusted proxy: entries the client wrote to the left of the proxy’s do not make new addresses', async () => {
  const h = await startHarness({ env: { REALTIME_MAX_CONNECTIONS_PER_IP: '2', TRUST_PROXY: 'true' } });
  try {
    const streams: RawStream[] = [];
    for (let i = 0; i < 3; i++) streams.push(await openRaw(h, { 'X-Forwarded-For': `10.9.8.${i + 1}, 203.0.113.7` }));
    assert.equal(
      streams.map((s) => s.status),
      [200, 200, 429],
    );
    const other = await openRaw(h, { 'X-Forwarded-For': '203.0.113.8' });
    assert.is(other.status, 200, 'another address the proxy saw has its own slots');
    await closeAll(h, [...streams, other]);
  } finally {
    await h.close();
  }
});

test('the per-node cap defaults to the open-files soft limit less a tenth (at least 100), so the node never runs out of descriptors', () => {
  const limits = 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n';
  assert.is(openFilesSoftLimit(limits), 1024);
  assert.is(maxConnectionsFor(1024), 1024 - 103);
  assert.is(maxConnectionsFor(500), 400);
  assert.is(maxConnectionsFor(undefined), 10_000);
  assert.is(openFilesSoftLimit('Max open files            unlimited            unlimited            files\n'), undefined);
  const own = openFilesSoftLimit();
  assert.is(loadConfig({}).realtime.maxConnections, own === undefined ? 10_000 : maxConnectionsFor(own));
  assert.is(loadConfig({ REALTIME_MAX_CONNECTIONS: '7' }).realtime.maxConnections, 7);
});

test('at start a node says in one line what its open-files limit allows and what to raise; a warning when the sockets configured exceed it', () => {
  const limits = openFilesLimits('Max open files            20000                20000                files\n');
  assert.equal(limits, { soft: 20_000, hard: 20_000 });
  const fits = describeOpenFiles(limits, { streams: 18_000, sockets: 19_000 });
  assert.not.ok(fits.short);
  assert.match(fits.line, /open-files limit 20000 \(hard 20000\): at most 18000 realtime streams and 19000 sockets; to hold more, raise the hard open-files limit/);
  const over = describeOpenFiles(limits, { streams: 100_000, sockets: 110_000 });
  assert.ok(over.short);
  assert.match(over.line, /LimitNOFILE=.* above 110000/);
  assert.not.match(over.line, /\n/);
});

test.run();
