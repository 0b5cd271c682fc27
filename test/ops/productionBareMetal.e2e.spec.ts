// docs/production.md, "Bare metal": the guide's shell blocks, read from the document, run as
// written on this machine as three node machines, a proxy machine and a database server would run
// them. Everything they install lands in a private mount namespace whose /etc, /opt, /var, /run and
// /root are overlays on throwaway directories, so `useradd`, the unit, /etc/nginx and ~/.pgpass
// leave nothing on the machine. What the test supplies, and nothing more:
// - the "# Your values" blocks, with loopback addresses (three nodes on three ports);
// - the PostgreSQL server: a throwaway cluster (its server-side commands reach it over its socket,
//   through PGHOST/PGPORT) whose pg_hba asks the `bridge` role for its password over TCP;
// - `npm ci`: a hard-linked copy of this checkout's node_modules (same lock file, no download);
// - `apt-get install`: checked as installed (dpkg), not run;
// - `systemctl`: answered by this test. `community-bridge` runs the installed unit's ExecStart in
//   its WorkingDirectory as its User, with its Environment and EnvironmentFile settings,
//   NoNewPrivileges and LimitNOFILE (as far as this machine's hard limit allows); each node
//   "machine" keeps the node.env it was started with. `nginx` runs Debian's nginx with the
//   installed /etc/nginx files;
// - the TLS certificate nginx names: a self-signed one for 127.0.0.1.
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, fetch } from 'undici';
import { createSimulator, SIMULATOR_KEY } from '../../src/community/simulator.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, defaultUsers } from '../support/harness.js';
import { NGINX, nginxMissing } from '../support/nginx.js';
import { freePort } from '../support/ports.js';
import { postgresBinaries, startCluster, type PostgresCluster } from '../support/postgres.js';

const root = new URL('../..', import.meta.url).pathname;
const GUIDE = readFileSync(join(root, 'docs/production.md'), 'utf8');
const OVERLAID = ['etc', 'opt', 'var', 'run', 'root'];
/** systemd's PATH for services. */
const SERVICE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin';
const BLOCK_TIMEOUT_MS = 300_000;

// ---------------------------------------------------------------------------------------------
// The guide's section, as blocks of shell.

interface Block {
  /** The `###` heading it is under ('' before the first). */
  heading: string;
  code: string;
}

function guideBlocks(): Block[] {
  const start = GUIDE.indexOf('\n## Bare metal: Debian, systemd, nginx, PostgreSQL\n');
  assert.ok(start >= 0, 'the guide has its "Bare metal" section');
  const end = GUIDE.indexOf('\n## ', start + 1);
  const blocks: Block[] = [];
  let heading = '';
  const lines = GUIDE.slice(start, end).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('### ')) heading = line.slice(4);
    if (line !== '```sh') continue;
    const code: string[] = [];
    for (i++; lines[i] !== '```'; i++) code.push(lines[i]!);
    blocks.push({ heading, code: `${code.join('\n')}\n` });
  }
  return blocks;
}

const isValues = (block: Block) => block.code.startsWith('# Your values');

/** The names a values block assigns (and nothing but assignments and comments in it). */
function assignedNames(block: Block): string[] {
  return block.code
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const name = /^([A-Z_][A-Z0-9_]*)=/.exec(line)?.[1];
      assert.ok(name, `a values block holds assignments only: ${line}`);
      return name!;
    });
}

const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

// ---------------------------------------------------------------------------------------------
// A private mount namespace with throwaway overlays.

interface Namespace {
  pid: number;
  /** A path inside the namespace, as this process reaches it. */
  path(inside: string): string;
  /** argv that runs `command` inside the namespace, in `cwd`. */
  argv(command: string[], cwd?: string): string[];
  close(): Promise<void>;
}

async function openNamespace(dir: string): Promise<Namespace> {
  const mounts = OVERLAID.map((d) => {
    for (const part of ['upper', 'work']) mkdirSync(join(dir, part, d), { recursive: true });
    return `mount -t overlay overlay -o lowerdir=/${d},upperdir=${dir}/upper/${d},workdir=${dir}/work/${d} /${d}`;
  }).join(' && ');
  const holder = spawn('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', `${mounts} && echo ready && exec sleep 100000`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  holder.stdout.on('data', (d) => (output += d));
  holder.stderr.on('data', (d) => (output += d));
  await eventually(
    () => {
      if (holder.exitCode !== null) throw new Error(`the mount namespace could not be made: ${output}`);
      return output.includes('ready');
    },
    { what: () => `the mount namespace: ${output}` },
  );
  const pid = holder.pid!;
  return {
    pid,
    path: (inside) => `/proc/${pid}/root${inside}`,
    // nsenter's own --wd opens the directory before entering: a shell changes to it inside, then execs.
    argv: (command, cwd) => ['nsenter', `--target=${pid}`, '--mount', '--', ...(cwd ? ['sh', '-c', 'cd "$0" && exec "$@"', cwd] : []), ...command],
    async close() {
      if (holder.exitCode === null) {
        const gone = new Promise((resolve) => holder.once('exit', resolve));
        holder.kill('SIGKILL');
        await gone;
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// systemd's part: the unit file read as systemd reads it, for what this unit uses.

interface Unit {
  service: Record<string, string[]>;
}

function parseUnit(text: string): Unit {
  const service: Record<string, string[]> = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    const [, key, value] = /^(\w+)=(.*)$/.exec(line) ?? [];
    assert.ok(key, `a unit line: ${line}`);
    if (section === 'Service') service[key!] = [...(service[key!] ?? []), value!];
  }
  return { service };
}

const one = (unit: Unit, key: string) => {
  const values = unit.service[key] ?? [];
  assert.is(values.length, 1, `one ${key}=`);
  return values[0]!;
};

/** KEY=value lines of an environment file (comments and blank lines skipped). */
function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim() || line.trim().startsWith('#')) continue;
    const [, key, value] = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line) ?? [];
    assert.ok(key, `an environment file line: ${line}`);
    env[key!] = value!;
  }
  return env;
}

interface Running {
  nodeId: string;
  child: ChildProcess;
  output(): string;
}

/** What `systemctl` does here: the unit's ExecStart per node "machine", and nginx. */
class FakeSystemd {
  private readonly machines = new Map<string, { nodeEnv: string; running: Running | undefined }>();
  private nginx: ChildProcess | undefined;
  private nginxOutput = '';
  readonly notes: string[] = [];

  constructor(private readonly ns: Namespace) {}

  get nodes(): Running[] {
    return [...this.machines.values()].flatMap((machine) => (machine.running ? [machine.running] : []));
  }

  async handle(args: string[]): Promise<void> {
    const [verb, ...rest] = args.filter((arg) => arg !== '--now' && arg !== '--quiet');
    const name = rest[0]?.replace(/\.service$/, '');
    if (verb === 'daemon-reload') return;
    if (name === 'community-bridge' && (verb === 'enable' || verb === 'start')) {
      // enable --now: this machine (the node.env written last). start: every machine that has one.
      if (verb === 'enable' || this.machines.size === 0) {
        const nodeEnv = readFileSync(this.ns.path('/etc/community-bridge/node.env'), 'utf8');
        const nodeId = environmentFile(nodeEnv).NODE_ID!;
        if (!this.machines.has(nodeId)) this.machines.set(nodeId, { nodeEnv, running: undefined });
      }
      for (const [nodeId, machine] of this.machines) machine.running ??= this.startNode(nodeId, machine.nodeEnv);
      return;
    }
    if (name === 'community-bridge' && verb === 'stop') {
      await Promise.all([...this.machines.values()].map((machine) => this.stopNode(machine)));
      return;
    }
    if (name === 'nginx' && verb === 'restart') return this.restartNginx();
    throw new Error(`systemctl ${args.join(' ')}: not something this guide should need`);
  }

  private unit(): Unit {
    return parseUnit(readFileSync(this.ns.path('/etc/systemd/system/community-bridge.service'), 'utf8'));
  }

  private startNode(nodeId: string, nodeEnv: string): Running {
    const unit = this.unit();
    const user = one(unit, 'User');
    const group = one(unit, 'Group');
    const passwd = readFileSync(this.ns.path('/etc/passwd'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith(`${user}:`));
    assert.ok(passwd, `the unit's User ${user} exists (the guide's useradd)`);
    const home = passwd!.split(':')[5]!;
    const env: Record<string, string> = { PATH: SERVICE_PATH, HOME: home, USER: user, LOGNAME: user, SHELL: '/usr/sbin/nologin', LANG: 'C.UTF-8' };
    for (const assignment of unit.service.Environment ?? []) Object.assign(env, environmentFile(assignment));
    for (const file of unit.service.EnvironmentFile ?? []) {
      const optional = file.startsWith('-');
      const path = file.replace(/^-/, '');
      if (optional && !existsSync(this.ns.path(path))) continue;
      // This machine's own node.env; the shared ones as they are now.
      Object.assign(env, environmentFile(path === '/etc/community-bridge/node.env' ? nodeEnv : readFileSync(this.ns.path(path), 'utf8')));
    }
    for (const state of unit.service.StateDirectory ?? []) {
      const dir = `/var/lib/${state}`;
      const [install, ...argv] = this.ns.argv(['install', '-d', '-m', one(unit, 'StateDirectoryMode'), '-o', user, '-g', group, dir]);
      execFileSync(install!, argv);
      env.STATE_DIRECTORY = dir;
    }
    const wanted = Number(one(unit, 'LimitNOFILE'));
    const hard = Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim());
    const nofile = Math.min(wanted, hard);
    if (nofile < wanted) this.notes.push(`LimitNOFILE=${wanted} applied as ${nofile}: this machine's hard limit`);
    assert.is(one(unit, 'NoNewPrivileges'), 'yes');
    const command = [
      'prlimit',
      `--nofile=${nofile}:${nofile}`,
      'setpriv',
      `--reuid=${user}`,
      `--regid=${group}`,
      '--init-groups',
      '--no-new-privs',
      '--',
      ...one(unit, 'ExecStart').split(/\s+/),
    ];
    const [file, ...argv] = this.ns.argv(command, one(unit, 'WorkingDirectory'));
    const child = spawn(file!, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    return { nodeId, child, output: () => output };
  }

  private async stopNode(machine: { running: Running | undefined }): Promise<void> {
    const running = machine.running;
    machine.running = undefined;
    if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
    const gone = new Promise((resolve) => running.child.once('exit', resolve));
    running.child.kill(one(this.unit(), 'KillSignal') as NodeJS.Signals);
    const stubborn = setTimeout(() => running.child.kill('SIGKILL'), 20_000);
    await gone;
    clearTimeout(stubborn);
  }

  private async restartNginx(): Promise<void> {
    await this.stopNginx();
    rmSync(this.ns.path('/run/nginx.pid'), { force: true });
    const [file, ...argv] = this.ns.argv([NGINX!, '-g', 'daemon off;']);
    const child = spawn(file!, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.nginxOutput = '';
    child.stdout!.on('data', (d) => (this.nginxOutput += d));
    child.stderr!.on('data', (d) => (this.nginxOutput += d));
    this.nginx = child;
    // Debian's nginx.service is ready once nginx wrote its pid file (its PIDFile=/run/nginx.pid).
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`nginx exited: ${this.nginxOutput}`);
        return existsSync(this.ns.path('/run/nginx.pid'));
      },
      { what: () => `nginx's pid file: ${this.nginxOutput}` },
    );
  }

  private async stopNginx(): Promise<void> {
    const nginx = this.nginx;
    if (!nginx || nginx.exitCode !== null || nginx.signalCode !== null) return;
    const gone = new Promise((resolve) => nginx.once('exit', resolve));
    nginx.kill('SIGQUIT');
    await gone;
  }

  /** The services' output, for a failure message. */
  diagnostics(): string {
    const nodes = [...this.machines].map(
      ([nodeId, machine]) =>
        `--- ${nodeId} (${machine.running ? `pid ${machine.running.child.pid}, exit ${machine.running.child.exitCode}` : 'stopped'})\n${machine.running?.output().slice(-3000) ?? ''}`,
    );
    return [...nodes, `--- nginx\n${this.nginxOutput}`].join('\n');
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.machines.values()].map((machine) => this.stopNode(machine)));
    await this.stopNginx();
  }
}

// ---------------------------------------------------------------------------------------------
// Running blocks: one shell session carried from block to block (its variables, umask and
// directory), as a person running the guide in one terminal.

interface Session {
  run(code: string, extraEnv?: Record<string, string>): Promise<string>;
}

/** `diagnose`: what else to show when a block fails (the services' output). */
function session(ns: Namespace, dir: string, checkout: string, names: string[], env: Record<string, string>, diagnose: () => string): Session {
  const state = join(dir, 'session-state.sh');
  writeFileSync(state, `cd ${shellQuote(checkout)}\n`);
  const save = [`{ declare -p ${names.join(' ')} 2>/dev/null || true; echo "umask $(umask)"; echo "cd $(printf %q "$PWD")"; } > ${shellQuote(state)}`];
  return {
    run: (code, extraEnv = {}) =>
      new Promise((resolve, reject) => {
        const script = [`set -eo pipefail`, `source ${shellQuote(state)}`, `trap ${shellQuote(save.join('\n'))} EXIT`, code].join('\n');
        const [file, ...argv] = ns.argv(['bash', '-c', script]);
        execFile(file!, argv, { env: { ...env, ...extraEnv }, timeout: BLOCK_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
          error
            ? reject(new Error(`the guide's block failed (${error.code ?? error.signal}):\n${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr.slice(-4000)}\n${diagnose()}`))
            : resolve(stdout),
        );
      }),
  };
}

/** The checkout a person runs the guide from: this repository's files, without what git ignores. */
function checkoutCopy(target: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(target, file)), { recursive: true });
    cpSync(join(root, file), join(target, file));
  }
  chmodSync(target, 0o755);
}

/** `npm ci` as this checkout's node_modules, hard-linked (its hidden lock file copied: npm rewrites it). */
function npmCiInstead(): string {
  const modules = join(root, 'node_modules');
  return `cp -al ${shellQuote(modules)} node_modules && rm node_modules/.package-lock.json && cp ${shellQuote(join(modules, '.package-lock.json'))} node_modules/`;
}

/** Each package of an `apt-get install` line is installed (postgresql-client: any postgresql-client-N). */
function checkPackages(code: string): string[] {
  const packages: string[] = [];
  for (const line of code.split('\n')) {
    const match = /^apt-get install -y (.+)$/.exec(line.trim());
    if (!match) {
      assert.ok(!line.trim() || line.trim().startsWith('#'), `the packages block installs packages only: ${line}`);
      continue;
    }
    for (const name of match[1]!.split(/\s+/)) {
      const status = spawnSync('dpkg-query', ['-W', `-f=\${Status}\\n`, name === 'postgresql-client' ? 'postgresql-client*' : name], { encoding: 'utf8' });
      assert.ok(/install ok installed/.test(status.stdout), `the guide's package ${name} is installed here`);
      packages.push(name);
    }
  }
  return packages;
}

// ---------------------------------------------------------------------------------------------

interface World {
  dir: string;
  ns: Namespace;
  cluster: PostgresCluster;
  systemd: FakeSystemd;
  control: Server;
  closePlatform: () => Promise<void>;
  proxyUrl: string;
  https: Agent;
  /** Each node's own address (NODE_ADDRESS), where its /readyz answers. */
  nodeAddresses: string[];
}

const binaries = postgresBinaries();
const unshareWorks = spawnSync('unshare', ['--mount', '--', 'true']).status === 0;
const missing = 'missing' in binaries ? binaries.missing : (nginxMissing ?? (unshareWorks ? undefined : 'unshare --mount is refused here (a private mount namespace is needed)'));
if (missing && process.env.CI === 'true') throw new Error(`the bare-metal guide must run under CI: ${missing}`);

const test = suite<World>('docs/production.md, bare metal, run as written');
const run = missing ? test.skip : test;
if (missing) console.log(`skipped: the bare-metal guide — ${missing}`);

test.after(async (world) => {
  await world.systemd?.stopAll();
  await world.ns?.close();
  world.control?.close();
  await world.closePlatform?.();
  await world.cluster?.destroy();
  await world.https?.close();
  if (world.dir) rmSync(world.dir, { recursive: true, force: true });
});

run('the unit is hardened and systemd accepts it', () => {
  const unit = parseUnit(readFileSync(join(root, 'deploy/community-bridge.service'), 'utf8'));
  assert.is(one(unit, 'NoNewPrivileges'), 'yes');
  assert.is(one(unit, 'ProtectSystem'), 'strict');
  assert.is(one(unit, 'PrivateTmp'), 'yes');
  assert.ok(Number(one(unit, 'LimitNOFILE')) >= 262_144, '100,000 streams a node, with room for everything else');
  assert.is(one(unit, 'CapabilityBoundingSet'), '');
  assert.is(one(unit, 'User'), 'bridge');
  const verify = spawnSync('systemd-analyze', ['verify', join(root, 'deploy/community-bridge.service')], { encoding: 'utf8' });
  if (verify.error) console.log(`systemd-analyze is not installed: the unit's syntax is not verified (${verify.error.message})`);
  else assert.is(`${verify.status} ${verify.stderr}`, '0 ', 'systemd-analyze verify: no complaint');
});

run('three nodes, nginx, a key, a backup and a restore, from the guide as written', async (world) => {
  const blocks = guideBlocks();
  world.dir = mkdtempSync(join(tmpdir(), 'community-bridge-baremetal-'));
  chmodSync(world.dir, 0o755);
  const checkout = join(world.dir, 'checkout');
  checkoutCopy(checkout);

  // The database server: the bridge role must give its password over TCP.
  world.cluster = await startCluster();
  const hba = join(world.cluster.dir, 'data', 'pg_hba.conf');
  writeFileSync(hba, `host all bridge 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
  await world.cluster.sql('SELECT pg_reload_conf()');
  // The guide makes its own database.
  await world.cluster.sql('DROP DATABASE bridge', [], 'postgres');

  const platform = await createSimulator({ users: defaultUsers() }).listen();
  world.closePlatform = platform.close;
  world.ns = await openNamespace(world.dir);
  world.systemd = new FakeSystemd(world.ns);

  // systemctl: a shim on PATH that asks this test.
  world.control = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () =>
      world.systemd.handle(JSON.parse(body) as string[]).then(
        () => res.end('ok\n'),
        (error: Error) => {
          res.statusCode = 500;
          res.end(`${error.message}\n`);
        },
      ),
    );
  });
  await new Promise<void>((resolve) => world.control.listen(0, '127.0.0.1', resolve));
  const controlPort = (world.control.address() as { port: number }).port;
  const shims = join(world.dir, 'bin');
  mkdirSync(shims);
  writeFileSync(
    join(shims, 'systemctl'),
    `#!/bin/sh\nexec curl -sS --fail-with-body --max-time 120 --data-binary "$(node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- "$@")" http://127.0.0.1:${controlPort}/\n`,
    { mode: 0o755 },
  );

  // The certificate the guide says to put in place.
  const tls = world.ns.path('/etc/nginx/tls');
  mkdirSync(tls, { recursive: true });
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(tls, 'privkey.pem'),
      '-out',
      join(tls, 'fullchain.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { encoding: 'utf8' },
  );
  assert.is(made.status, 0, made.stderr);
  world.https = new Agent({ connect: { ca: readFileSync(join(tls, 'fullchain.pem')) } });

  const nodePorts = [await freePort(), await freePort(), await freePort()];
  const proxyPort = await freePort();
  world.proxyUrl = `https://127.0.0.1:${proxyPort}`;
  const values: Record<string, string> = {
    DB: `127.0.0.1:${world.cluster.port}`,
    DB_TLS: 'sslmode=disable',
    NODES: nodePorts.map((port) => `127.0.0.1:${port}`).join(' '),
    PUBLIC_URL: world.proxyUrl,
    PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
    CORS_ORIGINS: 'https://game.example.test',
    COMMUNITY_URL: platform.url,
    COMMUNITY_KEY: SIMULATOR_KEY,
  };
  const nodeValues = nodePorts.map((port, i) => ({ NODE_ID: `bridge-${i + 1}`, NODE_ADDRESS: `127.0.0.1:${port}` }));
  world.nodeAddresses = nodeValues.map((node) => node.NODE_ADDRESS);

  const names = [...new Set(blocks.flatMap((block) => [...block.code.matchAll(/^\s*([A-Z_][A-Z0-9_]*)=/gm)].map((match) => match[1]!)))];
  const shell = session(
    world.ns,
    world.dir,
    checkout,
    names,
    {
      PATH: `${shims}:${process.env.PATH}`,
      HOME: '/root',
      LANG: 'C.UTF-8',
      // "On the PostgreSQL server": its local socket.
      PGHOST: world.cluster.dir,
      PGPORT: String(world.cluster.port),
    },
    () => world.systemd.diagnostics(),
  );
  const valuesFor = (block: Block, given: Record<string, string>) => {
    assert.equal(assignedNames(block).sort(), Object.keys(given).sort(), `the values the test gives are the ones the guide asks for (${block.heading || 'first'})`);
    return Object.entries(given)
      .map(([name, value]) => `${name}=${shellQuote(value)}`)
      .join('\n');
  };

  const byHeading = (heading: string) => blocks.filter((block) => block.heading === heading);
  const headingOf = (prefix: string) => {
    const heading = [...new Set(blocks.map((block) => block.heading))].find((h) => h.startsWith(prefix));
    assert.ok(heading, `a "### ${prefix}…" step`);
    return heading!;
  };

  let key = '';
  let dumpTaken = false;
  for (const heading of [...new Set(blocks.map((block) => block.heading))]) {
    const steps = byHeading(heading);
    if (heading.startsWith('Start')) {
      // Every node: its values, then the start block, once per node machine.
      const [nodeValuesBlock, ...rest] = steps;
      assert.ok(nodeValuesBlock && isValues(nodeValuesBlock), 'the start step begins with the node values');
      for (const given of nodeValues) {
        await shell.run(valuesFor(nodeValuesBlock!, given));
        for (const block of rest) await shell.run(block.code);
      }
      continue;
    }
    for (const block of steps) {
      if (isValues(block)) {
        await shell.run(valuesFor(block, values));
      } else if (/^apt-get install/m.test(block.code)) {
        assert.ok(checkPackages(block.code).includes('nginx'));
      } else if (/^npm ci --no-fund --no-audit$/m.test(block.code)) {
        await shell.run(block.code.replace(/^npm ci --no-fund --no-audit$/m, npmCiInstead()));
      } else if (/keys create/.test(block.code)) {
        const printed = await shell.run(block.code);
        key = /cbk_[A-Za-z0-9_-]+/.exec(printed)?.[0] ?? '';
        assert.ok(key, `a key printed: ${printed}`);
        // The command is the one every node printed at start, its placeholders filled in.
        const command = /&& (.+)\)$/.exec(block.code.trim())?.[1];
        for (const node of world.systemd.nodes) {
          const hint = /^ {2}Create an API key: +(.+)$/m.exec(node.output())?.[1];
          assert.is(hint?.replace('<your-game>', 'my-game').replace('<Your Game>', 'My Game'), command, `${node.nodeId} printed the guide's command`);
        }
      } else if (/^pg_dump /m.test(block.code)) {
        await shell.run(block.code);
        dumpTaken = true;
        // Appended after the dump: gone once it is restored.
        const after = await through(world, 'POST', '/adm/vip/submit', key, { oId: BOB.oId, quality: 'svip', expired: '2031-01-01 00:00:00' });
        assert.is(after.status, 200, after.text);
      } else if (/^pg_restore /m.test(block.code)) {
        assert.ok(dumpTaken, 'the restore comes after the backup');
        const output = await shell.run(block.code);
        assert.match(output, /^ok$/m, 'store check says ok');
        await afterRestore(world, key);
      } else {
        await shell.run(block.code);
      }
    }
    if (heading === headingOf('nginx')) await afterStart(world, key);
  }
  assert.ok(key && dumpTaken, 'the guide made a key and took a backup');
  for (const note of world.systemd.notes) console.log(`note: ${note}`);
});

/** A request through nginx over https. */
async function through(world: World, method: string, path: string, apiKey?: string, body?: unknown): Promise<{ status: number; text: string; json: () => unknown }> {
  const headers: Record<string, string> = {};
  if (apiKey) headers.apiKey = apiKey;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${world.proxyUrl}${path}`, { method, dispatcher: world.https, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

/** Readiness probed on each node directly, as the guide does (nginx answers 404 for /readyz). */
async function everyNodeReady(world: World, what: string, timeoutMs = 10_000): Promise<void> {
  for (const address of world.nodeAddresses) {
    await eventually(
      async () => {
        try {
          return (await fetch(`http://${address}/readyz`)).status === 200;
        } catch {
          return false;
        }
      },
      { what: `${what}: ${address}`, timeoutMs },
    );
  }
}

/** Three nodes up as the unit runs them (its user, NoNewPrivileges), and a write through nginx with the guide's key. */
async function afterStart(world: World, key: string): Promise<void> {
  assert.ok(key, 'the key step comes before nginx');
  await everyNodeReady(world, 'every node ready');
  assert.is((await through(world, 'GET', '/readyz')).status, 404, 'readiness is not public');
  const nodes = world.systemd.nodes;
  assert.equal(
    nodes.map((node) => node.nodeId),
    ['bridge-1', 'bridge-2', 'bridge-3'],
  );
  const bridgeUid = readFileSync(world.ns.path('/etc/passwd'), 'utf8')
    .split('\n')
    .find((line) => line.startsWith('bridge:'))!
    .split(':')[2];
  for (const node of nodes) {
    const status = readFileSync(`/proc/${node.child.pid}/status`, 'utf8');
    assert.match(status, new RegExp(`^Uid:\\t${bridgeUid}\\t`, 'm'), `${node.nodeId} runs as bridge`);
    assert.match(status, /^NoNewPrivs:\t1$/m);
  }
  const before = await through(world, 'POST', '/adm/vip/submit', key, { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' });
  assert.is(before.status, 200, before.text);
}

/** The nodes on the restored database: what was in the dump is there, what came after it is not. */
async function afterRestore(world: World, key: string): Promise<void> {
  await everyNodeReady(world, 'every restored node ready', 30_000);
  const alice = await through(world, 'GET', `/adm/vip/${ALICE.oId}`, key);
  assert.is(alice.status, 200, alice.text);
  assert.match(alice.text, '2030-01-01 00:00:00');
  const bob = await through(world, 'GET', `/adm/vip/${BOB.oId}`, key);
  assert.is(bob.status, 200, bob.text);
  assert.not.match(bob.text, '2031-01-01', 'the grant made after the dump is not in the restored log');
}

test.run();
