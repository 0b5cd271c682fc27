// Attack through the shipped reverse proxy (deploy/nginx.conf, Debian's nginx in front of a node
// with TRUST_PROXY): read a node's metrics and readiness from outside, hold more connections than
// one address should, and hold a request head open. The proxy answers 404 for /metrics and
// /readyz (scraped and probed on each node directly), 429 past 512 connections of one address,
// and closes a head that has not arrived whole after 10 s.
import { connect } from 'node:net';
import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startHarness, type Harness } from '../support/harness.js';
import { nginxMissing, startProxy, type NginxProxy } from '../support/nginx.js';

const PER_ADDRESS = 512;

function hold(url: string): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

const test = suite<{ h: Harness; proxy: NginxProxy }>('the shipped nginx configuration bounds what one address can do');

if (nginxMissing) {
  console.log(`skipped: the shipped proxy's bounds — ${nginxMissing}`);
} else {
  test.before(async (ctx) => {
    ctx.h = await startHarness({ env: { TRUST_PROXY: 'true', REALTIME_MAX_CONNECTIONS_PER_IP: '1000', REALTIME_CONNECTS_PER_SECOND: '0' } });
    ctx.proxy = await startProxy([new URL(ctx.h.url).host]);
  });
  test.after(async ({ h, proxy }) => {
    await proxy?.stop();
    await h?.close();
  });

  test('/metrics and /readyz are not served through the proxy; the node answers them directly', async ({ h, proxy }) => {
    for (const path of ['/metrics', '/readyz']) {
      assert.is((await fetch(`${proxy.url}${path}`)).status, 404, `${path} through the proxy`);
      assert.is((await fetch(`${h.url}${path}`)).status, 200, `${path} on the node`);
    }
    assert.is((await fetch(`${proxy.url}/healthz`)).status, 200, 'the rest is proxied');
  });

  test(`a request head still open after 10 s is closed; past ${PER_ADDRESS} connections an address gets 429`, async ({ proxy }) => {
    const { port } = new URL(proxy.url);
    const start = Date.now();
    const slow = connect(Number(port), '127.0.0.1', () => slow.write('GET /healthz HTTP/1.1\r\nHost: bridge\r\n'));
    const slowClosed = new Promise<number>((resolve) => slow.on('close', () => resolve(Date.now() - start)));
    slow.on('error', () => undefined);

    const streams = [];
    for (let i = 0; i < PER_ADDRESS + 8; i++) streams.push(await hold(`${proxy.url}/api/realtime`));
    const counts: Record<number, number> = {};
    for (const { status } of streams) counts[status] = (counts[status] ?? 0) + 1;
    assert.equal(counts, { 200: PER_ADDRESS, 429: 8 });
    for (const stream of streams) stream.close();

    // nginx's own default would hold it for 60 s.
    const after = await Promise.race([slowClosed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 30_000))]);
    assert.ok(after >= 9_000, `closed by the header timeout (${after} ms; -1: still open after 30 s)`);
  });
}

test.run();
