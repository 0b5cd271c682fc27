// Debian's nginx in front of service processes, run with the configuration the project ships
// (deploy/nginx.conf): only its upstream servers and its listening address are replaced, by the
// test's loopback ones. .ci/run installs nginx; without it the suites that need it are skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.js';
import { freePort } from './ports.js';

const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));
export const nginxMissing = NGINX ? undefined : 'nginx is not installed (apt-get install nginx)';

const SHIPPED = new URL('../../deploy/nginx.conf', import.meta.url).pathname;
const START_TIMEOUT_MS = 10_000;

export interface NginxProxy {
  url: string;
  /** Everything nginx wrote to its error log. */
  errors(): string;
  stop(): Promise<void>;
}

/** deploy/nginx.conf with these upstream addresses (host:port) and this listening port. */
export function shippedConfig(upstreams: readonly string[], port: number): string {
  const shipped = readFileSync(SHIPPED, 'utf8');
  const servers = [...shipped.matchAll(/^(\s*)server community-bridge-\d+:8090( [^;]*)?;$/gm)];
  if (servers.length === 0 || !/^\s*listen 8090;$/m.test(shipped)) throw new Error(`${SHIPPED} no longer has the upstream servers or the listen line this harness replaces`);
  const [first] = servers;
  const indent = first![1]!;
  const options = first![2] ?? '';
  const ours = upstreams.map((address) => `${indent}server ${address}${options};`).join('\n');
  return shipped
    .replace(/^\s*server community-bridge-\d+:8090( [^;]*)?;\n/gm, '')
    .replace(/^(\s*upstream community_bridge \{\n)/m, `$1${ours}\n`)
    .replace(/^(\s*)listen 8090;$/m, `$1listen 127.0.0.1:${port};`);
}

/** `port`: where it listens (a free one by default; known before, when the nodes must name it). */
export async function startProxy(upstreams: readonly string[], port?: number): Promise<NginxProxy> {
  if (!NGINX) throw new Error(nginxMissing);
  const dir = mkdtempSync(join(tmpdir(), 'community-bridge-nginx-'));
  port ??= await freePort();
  writeFileSync(join(dir, 'nginx.conf'), shippedConfig(upstreams, port));
  const errorLog = join(dir, 'error.log');
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', `daemon off; pid ${join(dir, 'nginx.pid')}; error_log ${errorLog} warn;`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => child.exitCode === null && child.signalCode === null && child.kill('SIGQUIT');
  process.once('exit', kill);
  const url = `http://127.0.0.1:${port}`;
  const errors = () => (existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : '') + stderr;
  const answers = async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited before answering: ${errors()}`);
    return fetch(`${url}/healthz`).then(
      () => true,
      () => false,
    );
  };
  await eventually(answers, { what: () => `nginx to answer on ${url}: ${errors()}`, timeoutMs: START_TIMEOUT_MS, everyMs: 50 }).catch((error: Error) => {
    kill();
    throw error;
  });
  return {
    url,
    errors,
    async stop() {
      kill();
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
