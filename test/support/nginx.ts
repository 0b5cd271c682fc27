// Debian's nginx in front of service processes, run with the configuration the project ships
// (deploy/nginx.conf as it is, its pid and error log in the test's directory) and its two includes
// written for the test: the nodes (each `server` line with the shipped lines' options) and where it
// listens. .ci/run installs nginx; without it the suites that need it are skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.js';
import { freePort } from './ports.js';

export const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));
export const nginxMissing = NGINX ? undefined : 'nginx is not installed (apt-get install nginx)';

const DEPLOY = new URL('../../deploy/', import.meta.url).pathname;
const START_TIMEOUT_MS = 10_000;

export interface NginxProxy {
  url: string;
  /** Everything nginx wrote to its error log. */
  errors(): string;
  stop(): Promise<void>;
}

/** The options of the shipped nodes file's `server` lines (`max_fails=1 fail_timeout=5s`). */
function shippedServerOptions(): string {
  const shipped = readFileSync(join(DEPLOY, 'community-bridge-nodes.conf'), 'utf8');
  const options = /^server \S+((?: [^;]*)?);$/m.exec(shipped);
  if (!options) throw new Error(`${DEPLOY}community-bridge-nodes.conf no longer has the server lines this harness copies`);
  return options[1]!;
}

/**
 * Writes into `dir` deploy/nginx.conf (its pid file and error log moved into `dir`), the nodes
 * include naming these upstream addresses (host:port), and the listen include with these lines
 * (`listen 127.0.0.1:<port>;` by default). Answers the main file's path and its error log's.
 */
export function writeShippedConfig(dir: string, upstreams: readonly string[], listen: string | readonly string[]): { file: string; errorLog: string } {
  const errorLog = join(dir, 'error.log');
  const shipped = readFileSync(join(DEPLOY, 'nginx.conf'), 'utf8');
  const paths = /^pid \S+;$/m.test(shipped) && /^error_log \S+ (\w+);$/m.test(shipped);
  if (!paths || !/^\s*include community-bridge-nodes\.conf;$/m.test(shipped) || !/^\s*include community-bridge-listen\.conf;$/m.test(shipped)) {
    throw new Error(`${DEPLOY}nginx.conf no longer has the pid, error_log and include lines this harness relies on`);
  }
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, shipped.replace(/^pid \S+;$/m, `pid ${join(dir, 'nginx.pid')};`).replace(/^error_log \S+ (\w+);$/m, `error_log ${errorLog} $1;`));
  const options = shippedServerOptions();
  writeFileSync(join(dir, 'community-bridge-nodes.conf'), upstreams.map((address) => `server ${address}${options};\n`).join(''));
  writeFileSync(join(dir, 'community-bridge-listen.conf'), `${[listen].flat().join('\n')}\n`);
  return { file, errorLog };
}

/** `port`: where it listens (a free one by default; known before, when the nodes must name it). */
export async function startProxy(upstreams: readonly string[], port?: number): Promise<NginxProxy> {
  if (!NGINX) throw new Error(nginxMissing);
  const dir = mkdtempSync(join(tmpdir(), 'community-bridge-nginx-'));
  port ??= await freePort();
  const { file, errorLog } = writeShippedConfig(dir, upstreams, `listen 127.0.0.1:${port};`);
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', file, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
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
