// The container image, without a Docker engine (none runs here): the Dockerfile's build stage is
// replayed in a temp directory — its COPY lines from the context .dockerignore leaves, its RUN
// lines as written, except `npm ci`, replaced by a hard-linked copy of this checkout's
// node_modules, and apt-get — then the final stage's COPY --from lines, and the image's CMD,
// HEALTHCHECK and operator CLI run there with its ENV, as a container would run them. What
// Compose does with docker-compose.yml cannot run here either: its shape is checked.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, posix, relative } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { commandOf, copyOf, dockerIgnore, envOf, parseDockerfile, type Stage } from '../support/dockerfile.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/ports.js';

const root = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);
const stages = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const ignored = dockerIgnore(readFileSync(join(root, '.dockerignore'), 'utf8'));
const [buildStage, finalStage] = [stages.find((s) => s.name === 'build')!, stages.at(-1)!];

const instructions = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
const only = (stage: Stage, keyword: string) => {
  const found = instructions(stage, keyword);
  assert.is(found.length, 1, `one ${keyword} in the stage`);
  return found[0]!;
};

/** A path inside a stage's file system, for a stage reproduced in `dir` with WORKDIR `workdir`. */
function inStage(dir: string, workdir: string, path: string): string {
  if (!isAbsolute(path)) return join(dir, path);
  const inside = posix.relative(workdir, path);
  if (inside.startsWith('..')) throw new Error(`${path} is outside WORKDIR ${workdir}: not reproduced here`);
  return join(dir, inside);
}

/** Where COPY puts `from`: a directory's contents onto `dest`, a file into `dest` when it ends with `/`. */
const copyTarget = (from: string, dest: string) => (dest.endsWith('/') && !statSync(from).isDirectory() ? join(dest, posix.basename(from)) : dest);

const workdirOf = (stage: Stage) => only(stage, 'WORKDIR').args;

/** The build stage replayed in `dir` (its WORKDIR). */
async function replayBuildStage(dir: string): Promise<void> {
  const workdir = workdirOf(buildStage);
  for (const { keyword, args, flags } of buildStage.instructions) {
    if (keyword === 'COPY') {
      assert.is(flags.from, undefined, 'the build stage copies from the context');
      const { sources, dest } = copyOf(args);
      for (const source of sources) {
        assert.not.ok(ignored(source), `${source} is in the build context`);
        const from = join(root, source);
        cpSync(from, copyTarget(from, inStage(dir, workdir, dest)), { recursive: true, filter: (path) => !ignored(relative(root, path)) });
      }
    } else if (keyword === 'RUN') {
      // System packages: this machine has them. npm ci: what it installs is this checkout's
      // node_modules (same lock file), linked rather than fetched again.
      if (/^apt-get\b/.test(args)) continue;
      if (/^npm ci\b/.test(args)) {
        await run('cp', ['-al', join(root, 'node_modules'), join(dir, 'node_modules')]);
        continue;
      }
      const [file, ...argv] = commandOf(args);
      await run(file!, argv, { cwd: dir, env: process.env, timeout: 120_000 });
    }
  }
}

/** The final stage's file tree in `dir`, copied out of the build stage reproduced in `buildDir`. */
async function replayFinalStage(buildDir: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const { args, flags } of instructions(finalStage, 'COPY')) {
    assert.is(flags.from, 'build', `the image takes only built files: COPY ${args}`);
    const { sources, dest } = copyOf(args);
    for (const source of sources) {
      const from = inStage(buildDir, workdirOf(buildStage), source);
      // Hard links: node_modules is large, and nothing writes to these files.
      await run('cp', ['-alT', from, copyTarget(from, inStage(dir, workdirOf(finalStage), dest))]);
    }
  }
}

const work = mkdtempSync(join(tmpdir(), 'community-bridge-image-'));
const buildDir = join(work, 'build');
const appDir = join(work, 'app');
const dataDir = join(work, 'data');

test.before(async () => {
  await replayBuildStage(buildDir);
  await replayFinalStage(buildDir, appDir);
});

test.after(() => rmSync(work, { recursive: true, force: true }));

test('.dockerignore keeps node_modules, data directories and secrets out of the build context', () => {
  for (const path of [
    'node_modules/koa/package.json',
    'data/session-secret',
    'data/dev/events.sqlite',
    'var/events.sqlite-wal',
    'var/session-secret',
    'packages/sdk/node_modules/x/index.js',
    '.git/config',
    'dist/main.js',
    '.env',
    'npm-debug.log',
  ]) {
    assert.ok(ignored(path), `${path} stays out`);
  }
  for (const path of ['package.json', 'package-lock.json', 'tsconfig.build.json', 'src/main.ts', 'src/cli/main.ts']) assert.not.ok(ignored(path), `${path} goes in`);
});

test('the image holds the compiled service, its CLI and production dependencies; no sources, dev tools or platform simulator', () => {
  assert.equal(readdirSync(appDir).sort(), ['dist', 'node_modules', 'package.json']);
  const files = readdirSync(join(appDir, 'dist'), { recursive: true, encoding: 'utf8' });
  for (const file of ['main.js', 'cli/main.js', 'healthcheck.js']) assert.ok(files.includes(file), `dist/${file}`);
  const devOnly = files.filter((f) => /simulator|demoUsers|(^|\/)dev(Demo)?\.(js|html)$/.test(f));
  assert.equal(devOnly, [], 'the simulator and `npm run dev` stay out');
  const modules = readdirSync(join(appDir, 'node_modules'));
  // typescript stays: npm keeps it as valibot's optional peer dependency.
  for (const name of ['tsx', 'uvu', 'autocannon', 'playwright-core', 'yaml']) assert.not.ok(modules.includes(name), `${name} (a dev dependency) is pruned`);
  for (const name of ['koa', 'better-sqlite3', 'swagger-ui-dist']) assert.ok(modules.includes(name), name);
});

test("the image's CMD serves, its HEALTHCHECK follows /readyz, and a key from its CLI opens the admin API", async () => {
  const image = envOf(
    instructions(finalStage, 'ENV')
      .map((i) => i.args)
      .join(' '),
  );
  assert.ok(only(finalStage, 'VOLUME').args.includes(image.DATA_DIR!), 'DATA_DIR is the volume');
  // The image's environment, with this machine's paths: its data volume in a temp directory, a
  // free port, loopback only. Nothing from this process's environment (no COMMUNITY_KEY).
  const env = { PATH: process.env.PATH!, HOME: work, ...image, DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1' };
  const exec = (argv: string[]) => {
    assert.is(argv[0], 'node', `the image runs node itself: ${argv.join(' ')}`);
    return [process.execPath, ...argv.slice(1)] as const;
  };
  const [healthFile, ...healthArgs] = exec(commandOf(only(finalStage, 'HEALTHCHECK').args.replace(/^CMD\s+/, '')));
  const healthcheck = () =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(healthFile, healthArgs, { cwd: appDir, env, timeout: 10_000 }, (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout })),
    );

  const down = await healthcheck();
  assert.is(down.code, 1, 'unhealthy while nothing listens');
  assert.match(down.out, /\/readyz did not answer/);

  const [cmdFile, ...cmdArgs] = exec(commandOf(only(finalStage, 'CMD').args));
  const service: ChildProcess = spawn(cmdFile, cmdArgs, { cwd: appDir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let startup = '';
  service.stderr!.on('data', (d) => (startup += d));
  const exited = new Promise<number | null>((resolve) => service.once('exit', resolve));
  try {
    await eventually(async () => (await healthcheck()).code === 0, { what: 'the HEALTHCHECK passes', timeoutMs: 30_000, everyMs: 200 });
    assert.match((await healthcheck()).out, /^200 \{"status":"ready"/);
    // Start-up names the CLI as it runs in the image.
    assert.match(startup, new RegExp(`Create an API key: +DATA_DIR=${dataDir} node dist/cli/main\\.js keys create`));
    assert.not.match(startup, /npm run/, 'no npm scripts in the image');

    const [cliFile, ...cliArgs] = exec(['node', 'dist/cli/main.js', 'keys', 'create', '--app-id', 'my-game', '--app', 'My Game', '--permissions', '*', '--json']);
    const created = await run(cliFile, cliArgs, { cwd: appDir, env });
    assert.is(created.stderr, `Store: SQLite file ${join(dataDir, 'events.sqlite')}\n`);
    const { key } = JSON.parse(created.stdout) as { key: string };
    assert.match(key, /^cbk_/);

    const url = `http://127.0.0.1:${env.PORT}`;
    // A running service sees the CLI's key within a second.
    const audit = await eventually(async () => {
      const res = await fetch(`${url}/adm/audit/points/1630399136785`, { headers: { apiKey: key } });
      return res.status === 401 ? false : { status: res.status, body: await res.json() };
    }, 'the service to accept the new key');
    assert.equal(audit, { status: 200, body: { code: 0, msg: 'success', data: { items: [] } } });
    const points = await fetch(`${url}/adm/points/edit`, {
      method: 'POST',
      headers: { apiKey: key, 'content-type': 'application/json' },
      body: JSON.stringify({ oId: '1630399136785', point: 1, memo: 'm' }),
    });
    assert.is(points.status, 503, 'no platform key in this environment: a setting to fix, not a key problem');
    assert.match(((await points.json()) as { message: string }).message, /COMMUNITY_KEY/);
    const home = (await (await fetch(`${url}/`, { headers: { accept: 'application/json' } })).json()) as { version: string };
    assert.is(home.version, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version, "the version from the image's package.json");
  } finally {
    service.kill('SIGTERM');
  }
  assert.is(await exited, 0, `a clean stop on SIGTERM:\n${startup}`);
  assert.is((await healthcheck()).code, 1, 'unhealthy once stopped');
});

/** A service of docker-compose.yml, as far as these tests read it. */
interface ComposeService {
  image?: string;
  build?: string;
  profiles?: string[];
  ports?: string[];
  volumes?: string[];
  networks?: unknown;
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

const compose = parseYaml(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: { postgres: ComposeService; nginx: ComposeService; eventstore: ComposeService } & Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  networks?: Record<string, unknown>;
};
const services = compose.services;
/** The service replicas: built from this checkout. */
const replicas = Object.entries(services).filter(([, s]) => s.build === '.');
const profileOf = (service: { profiles?: string[] }) => service.profiles?.join(',') ?? 'default';

test('docker-compose.yml: by default PostgreSQL with a volume and a pg_isready health check, unpublished; two replicas on it with distinct NODE_IDs', () => {
  const { postgres } = services;
  assert.match(postgres.image!, /^postgres:(16|17)$/);
  assert.is(postgres.profiles, undefined, 'started by default');
  assert.equal(postgres.healthcheck!.test.slice(0, 2), ['CMD', 'pg_isready']);
  assert.is(postgres.ports, undefined, 'the database port is not published');
  assert.equal(postgres.volumes, ['postgres-data:/var/lib/postgresql/data']);
  assert.ok(compose.volumes && 'postgres-data' in compose.volumes, 'a named volume');
  assert.match(postgres.environment!.POSTGRES_PASSWORD!, /^\$\{POSTGRES_PASSWORD:\?.+\}$/, 'the password is required');

  const onPostgres = replicas.filter(([, s]) => profileOf(s) === 'default');
  assert.equal(
    onPostgres.map(([name, s]) => [name, s.environment!.NODE_ID]),
    [
      ['community-bridge-1', 'community-bridge-1'],
      ['community-bridge-2', 'community-bridge-2'],
    ],
  );
  for (const [name, s] of onPostgres) {
    assert.match(s.environment!.EVENTSTORE_CONNECTION_STRING!, /^postgresql:\/\/bridge:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/bridge(\?|$)/, name);
    assert.equal(s.depends_on, { postgres: { condition: 'service_healthy' } }, name);
  }
});

test('docker-compose.yml: every replica is checked on /readyz, shares SESSION_SECRET and the required settings, and publishes nothing; NODE_IDs are distinct', () => {
  assert.is(replicas.length, 4);
  for (const [name, s] of replicas) {
    assert.equal(s.healthcheck!.test, ['CMD', 'node', 'dist/healthcheck.js'], `${name}: the image's /readyz check`);
    assert.is(s.ports, undefined, `${name}: reached through nginx only`);
    const env = s.environment!;
    for (const variable of ['COMMUNITY_KEY', 'SESSION_SECRET']) assert.match(env[variable]!, new RegExp(`^\\$\\{${variable}:\\?.+\\}$`), `${name}: ${variable} is required`);
    assert.match(env.CORS_ORIGINS!, /^\$\{CORS_ORIGINS:-[^}]*\}$/, name);
    assert.is(env.TRUST_PROXY, 'true', `${name}: behind one proxy`);
    assert.is(env.PORT, '8090');
  }
  // Compose's interpolation, with values for the required variables: the service takes each
  // replica's settings as they are.
  const given: Record<string, string> = { COMMUNITY_KEY: 'gold-finger-key', SESSION_SECRET: 's'.repeat(32), POSTGRES_PASSWORD: 'a1b2c3' };
  const interpolate = (value: string) => value.replace(/\$\{(\w+)(?::[-?]([^}]*))?\}/g, (_, name: string, fallback = '') => given[name] ?? fallback);
  for (const [name, s] of replicas) {
    const env = Object.fromEntries(Object.entries(s.environment!).map(([k, v]) => [k, interpolate(v)]));
    const config = loadConfig(env);
    assert.is(config.nodeId, env.NODE_ID, name);
    assert.is(config.eventStoreConnectionString, env.EVENTSTORE_CONNECTION_STRING, name);
  }
  const ids = replicas.map(([, s]) => s.environment!.NODE_ID!);
  assert.is(new Set(ids).size, ids.length, `distinct NODE_IDs: ${ids.join(', ')}`);
  assert.is(new Set(replicas.map(([, s]) => s.environment!.SESSION_SECRET)).size, 1, 'one SESSION_SECRET');
  // healthcheck.js asks the service where it listens: the settings it reads are the service's.
  assert.ok(readFileSync(join(root, 'src/healthcheck.ts'), 'utf8').includes('/readyz'));
});

test('docker-compose.yml: nginx is the only published port (8090), mounts deploy/nginx.conf, and waits for healthy replicas', () => {
  const published = Object.entries(services).filter(([, s]) => s.ports && profileOf(s) === 'default');
  assert.equal(
    published.map(([name, s]) => [name, s.ports]),
    [['nginx', ['8090:8090']]],
  );
  const { nginx } = services;
  assert.match(nginx.image!, /^nginx:1\.\d+/);
  assert.equal(nginx.volumes, [
    './deploy/nginx.conf:/etc/nginx/nginx.conf:ro',
    './deploy/community-bridge-nodes.conf:/etc/nginx/community-bridge-nodes.conf:ro',
    './deploy/community-bridge-listen.conf:/etc/nginx/community-bridge-listen.conf:ro',
  ]);
  assert.equal(nginx.depends_on, {
    'community-bridge-1': { condition: 'service_healthy' },
    'community-bridge-2': { condition: 'service_healthy' },
  });
});

test('docker-compose.yml: --profile eventstoredb keeps a healthy, unpublished KurrentDB and points a replica pair at it, behind its own nginx under the names deploy/nginx.conf uses', () => {
  const inProfile = Object.entries(services)
    .filter(([, s]) => profileOf(s) === 'eventstoredb')
    .map(([name]) => name);
  assert.equal(inProfile, ['eventstore', 'community-bridge-eventstoredb-1', 'community-bridge-eventstoredb-2', 'nginx-eventstoredb']);
  const { eventstore } = services;
  assert.equal(eventstore.healthcheck!.test.slice(0, 2), ['CMD', 'curl'], 'the KurrentDB image ships curl');
  assert.match(eventstore.healthcheck!.test.at(-1)!, /^http:\/\/localhost:2113\/health\/live$/);
  assert.is(eventstore.ports, undefined, 'the insecure database port is not published');
  for (const [n, name] of [
    [1, 'community-bridge-eventstoredb-1'],
    [2, 'community-bridge-eventstoredb-2'],
  ] as const) {
    const s = services[name]!;
    assert.match(s.environment!.EVENTSTORE_CONNECTION_STRING!, /^esdb:\/\/eventstore:2113\?/);
    assert.equal(s.depends_on, { eventstore: { condition: 'service_healthy' } });
    assert.equal(s.networks, { eventstoredb: { aliases: [`community-bridge-${n}`] } }, 'the name nginx.conf balances over, on this network only');
  }
  const proxy = services['nginx-eventstoredb']!;
  assert.equal(proxy.volumes, services.nginx.volumes, 'the same files as the PostgreSQL pair');
  assert.equal(proxy.networks, ['eventstoredb'], 'not on the default network, where the names are the PostgreSQL pair');
  assert.equal(proxy.ports, ['8091:8090']);
  assert.equal(eventstore.networks, ['eventstoredb']);
  assert.ok(compose.networks && 'eventstoredb' in compose.networks);
});

test.run();
