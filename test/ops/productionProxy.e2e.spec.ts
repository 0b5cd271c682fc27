// docs/production.md, "Reverse proxy and TLS": deploy/nginx.conf with the guide's listen include
// for TLS (`listen … ssl`, with a certificate), in front of a node run with TRUST_PROXY
// and an https PUBLIC_URL. Over https through nginx the realtime stream gets its frames as they
// are written (PB_CONNECT, then heartbeats), its cookie is Secure, and a client that writes its own
// X-Forwarded-For is still counted at the address nginx saw. Debian's nginx and openssl; without
// them the suite says it was skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { startHarness, type Harness } from '../support/harness.js';
import { NGINX, nginxMissing, writeShippedConfig } from '../support/nginx.js';
import { freePort } from '../support/ports.js';
import { OPENSSL, selfSignedCertificate } from '../support/tls.js';

const SHIPPED = new URL('../../deploy/nginx.conf', import.meta.url);

/**
 * The guide's listen include for TLS (the ```nginx block of "Reverse proxy and TLS"), listening on
 * this address with this certificate instead of 443 and /etc/nginx/tls.
 */
function guideTlsListen(address: string, certificate: string, key: string): string[] {
  const guide = readFileSync(new URL('../../docs/production.md', import.meta.url), 'utf8');
  const section = guide.slice(guide.indexOf('\n## Reverse proxy and TLS\n'), guide.indexOf('\n## ', guide.indexOf('\n## Reverse proxy and TLS\n') + 1));
  const block = /```nginx\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('no nginx block in "Reverse proxy and TLS"');
  const lines = block.trim().split('\n');
  assert.equal(
    lines.map((line) => line.split(/\s+/)[0]),
    ['listen', 'ssl_certificate', 'ssl_certificate_key'],
    'the listen line and the certificate',
  );
  assert.match(lines[0]!, /^listen 443 ssl;$/);
  return [`listen ${address} ssl;`, `ssl_certificate ${certificate};`, `ssl_certificate_key ${key};`];
}

interface Stream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Everything received so far. */
  received(): string;
  close(): void;
}

/** Opens GET path over https and answers once the status line is in; the body keeps arriving. */
function open(options: RequestOptions): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request({ method: 'GET', ...options }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', () => undefined);
      resolve({ status: res.statusCode!, headers: res.headers, received: () => text, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

interface Context {
  h: Harness;
  proxyPort: number;
  ca: Buffer;
}

const test = suite<Context>('TLS at nginx in front of a node, as docs/production.md sets it up');

const TESTS: Record<string, (ctx: Context) => Promise<void>> = {
  'the shipped realtime location is unbuffered and outlasts many heartbeats; the proxy sets X-Forwarded-For and -Proto': async () => {
    const shipped = readFileSync(SHIPPED, 'utf8');
    const realtime = /location = \/api\/realtime \{([^}]*)\}/.exec(shipped)?.[1] ?? '';
    assert.match(realtime, /^\s*proxy_buffering off;$/m);
    const timeout = /^\s*proxy_read_timeout (\d+)([smh]);$/m.exec(realtime);
    assert.ok(timeout, 'a read timeout of its own');
    const seconds = Number(timeout![1]) * { s: 1, m: 60, h: 3600 }[timeout![2] as 's' | 'm' | 'h'];
    assert.ok(seconds >= 4 * 15, 'at least four default heartbeats (REALTIME_HEARTBEAT_MS, 15 s)');
    assert.match(shipped, /^\s*proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;$/m);
    assert.match(shipped, /^\s*proxy_set_header X-Forwarded-Proto \$scheme;$/m);
  },

  'over https through nginx a stream gets PB_CONNECT and then heartbeats as they are written, with a Secure cookie': async ({ proxyPort, ca }) => {
    const stream = await open({ host: '127.0.0.1', port: proxyPort, path: '/api/realtime', ca });
    try {
      assert.is(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      const cookie = [stream.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('cb_client='));
      assert.ok(cookie, 'the client binding cookie');
      assert.match(cookie!, /; Secure/);
      await eventually(() => stream.received().includes('event: PB_CONNECT'), { what: () => `PB_CONNECT through nginx; got ${JSON.stringify(stream.received())}` });
      // Heartbeats come every 100 ms here: two in a row arrive while the stream stays open.
      await eventually(() => stream.received().split(': heartbeat').length > 2, { what: () => `heartbeats through nginx; got ${JSON.stringify(stream.received())}` });
    } finally {
      stream.close();
    }
  },

  'with TRUST_PROXY each browser is counted at its own address, which nginx appends, whatever X-Forwarded-For it sent': async ({ h, proxyPort, ca }) => {
    // Two browsers on two addresses; the node sees only nginx's connections, all from 127.0.0.1.
    const from = (localAddress: string, claimed?: string) =>
      open({ host: '127.0.0.1', port: proxyPort, path: '/api/realtime', ca, localAddress, headers: claimed ? { 'X-Forwarded-For': claimed } : {} });
    const first = await from('127.0.0.3', '203.0.113.1');
    const other = await from('127.0.0.4');
    try {
      assert.is(first.status, 200);
      assert.is(other.status, 200, 'another address has a cap of its own');
      // The first browser again, claiming another address: nginx appends 127.0.0.3, the node reads the right-most entry.
      const again = await from('127.0.0.3', '203.0.113.2');
      again.close();
      assert.is(again.status, 429);
    } finally {
      first.close();
      other.close();
    }
    await eventually(() => h.service.deps.realtime.hub.size === 0, 'the streams closed on the node');
  },
};

const missing = nginxMissing ?? (OPENSSL ? undefined : 'openssl is not installed');
if (missing) {
  console.log(`skipped: TLS at nginx — ${missing}`);
  for (const title of Object.keys(TESTS)) test.skip(title);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'community-bridge-tls-'));
  const { certificate, key, ca } = selfSignedCertificate(dir);
  const proxyPort = await freePort();
  const h = await startHarness({
    env: { TRUST_PROXY: 'true', PUBLIC_URL: `https://127.0.0.1:${proxyPort}`, REALTIME_MAX_CONNECTIONS_PER_IP: '1', REALTIME_HEARTBEAT_MS: '100' },
  });
  const upstream = new URL(h.url).host;
  const { file, errorLog } = writeShippedConfig(dir, [upstream], guideTlsListen(`127.0.0.1:${proxyPort}`, certificate, key));
  const nginx: ChildProcess = spawn(NGINX!, ['-p', dir, '-c', file, '-g', 'daemon off;'], { stdio: 'ignore' });
  const stopNginx = () => nginx.exitCode === null && nginx.signalCode === null && nginx.kill('SIGQUIT');
  process.once('exit', stopNginx);
  const nginxErrors = () => (existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : '');
  await eventually(
    async () => {
      if (nginx.exitCode !== null) throw new Error(`nginx exited: ${nginxErrors()}`);
      return open({ host: '127.0.0.1', port: proxyPort, path: '/healthz', ca }).then(
        (res) => {
          res.close();
          return res.status === 200;
        },
        () => false,
      );
    },
    { what: () => `nginx to answer over https: ${nginxErrors()}`, everyMs: 50 },
  );
  test.before.each((ctx) => {
    Object.assign(ctx, { h, proxyPort, ca });
  });
  test.after(async () => {
    stopNginx();
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const [title, run] of Object.entries(TESTS)) test(title, run);
}
test.run();
