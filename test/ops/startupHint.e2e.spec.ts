// The "Create an API key" line a node prints when it starts is a command for its own store: run
// as printed (its placeholders filled in, as a person does) from the directory the node runs in,
// it issues a key the running node accepts. On SQLite (DATA_DIR), on PostgreSQL from a connection
// string in the environment and from EVENTSTORE_CONNECTION_STRING_FILE; a string holding a password
// is printed without it, and the line after says so.
import { exec } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator } from '../../src/community/simulator.js';
import { eventually } from '../support/eventually.js';
import { ALICE, defaultUsers } from '../support/harness.js';
import { postgresBinaries, startCluster, type PostgresCluster } from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/serviceProcess.js';

const root = new URL('../..', import.meta.url).pathname;

interface World {
  cluster: PostgresCluster | undefined;
  platformUrl: string;
  closePlatform: () => Promise<void>;
  dir: string;
}

/** The command the node printed after "Create an API key:", as one line of shell. */
function printedCommand(node: ServiceProcess): string {
  const line = /^ {2}Create an API key: +(.+)$/m.exec(node.output())?.[1];
  assert.ok(line, `no "Create an API key" line in:\n${node.output()}`);
  return line;
}

/** Runs a line of shell from the repository's directory, as an operator next to the node would; answers its stdout. */
function shell(line: string): Promise<string> {
  return new Promise((resolve, reject) =>
    exec(line, { cwd: root, env: { ...process.env, LOG_LEVEL: 'silent' }, timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${line}\nexited ${error.code}: ${stderr}`)) : resolve(stdout),
    ),
  );
}

/** Fills the printed placeholders as a person would, adds --json, runs it, and checks the key on the node. */
async function keyFromPrintedCommandWorks(node: ServiceProcess, appId: string): Promise<void> {
  const printed = printedCommand(node);
  assert.match(printed, `keys create --app-id <your-game> --app "<Your Game>" --permissions '*'`);
  const filled = printed.replace('<your-game>', appId).replace('<Your Game>', 'My Game');
  const { key } = JSON.parse(await shell(`${filled} --json`)) as { key: string };
  assert.match(key, /^cbk_/);
  await keyAccepted(node, key);
}

/**
 * The node follows the store the CLI wrote to: the key works once the node has read it (the
 * README: within a second), so an early 401 is asked again.
 */
async function keyAccepted(node: ServiceProcess, key: string): Promise<void> {
  let last = '';
  await eventually(
    async () => {
      const answer = await node.request('GET', `/adm/vip/${ALICE.oId}`, { apiKey: key });
      last = `${answer.status} ${answer.text}`;
      return answer.status === 200;
    },
    { what: () => `the node to accept the printed command's key (last answer: ${last})` },
  );
}

const test = suite<World>('the start-up line that creates an API key');

test.before(async (world) => {
  const platform = await createSimulator({ users: defaultUsers() }).listen();
  world.platformUrl = platform.url;
  world.closePlatform = platform.close;
  world.dir = await mkdtemp(join(tmpdir(), 'community-bridge-hint-'));
  world.cluster = 'missing' in postgresBinaries() ? undefined : await startCluster();
});

test.after(async (world) => {
  await world.cluster?.destroy();
  await world.closePlatform();
  await rm(world.dir, { recursive: true, force: true });
});

const started = (world: World, nodeId: string, env: Record<string, string> = {}) =>
  startServiceProcess({ dataDir: join(world.dir, nodeId), communityUrl: world.platformUrl, nodeId, env });

test('on SQLite: DATA_DIR and the CLI', async (world) => {
  const node = await started(world, 'sqlite');
  try {
    assert.match(printedCommand(node), `DATA_DIR=${join(world.dir, 'sqlite')} npm run --silent cli -- keys create`);
    await keyFromPrintedCommandWorks(node, 'sqlite-game');
  } finally {
    await node.kill();
  }
});

const postgres = 'missing' in postgresBinaries() ? undefined : true;
if (!postgres) console.log(`skipped: the start-up line on PostgreSQL — ${(postgresBinaries() as { missing: string }).missing}`);
const onPostgres = postgres ? test : test.skip;

onPostgres('on PostgreSQL, the connection string in the environment: the same string', async (world) => {
  const connectionString = await world.cluster!.connectionStringFor('hint_env');
  const node = await started(world, 'pg-env', { EVENTSTORE_CONNECTION_STRING: connectionString });
  try {
    assert.match(printedCommand(node), `EVENTSTORE_CONNECTION_STRING='${connectionString}' npm run --silent cli -- keys create`);
    await keyFromPrintedCommandWorks(node, 'env-game');
  } finally {
    await node.kill();
  }
});

onPostgres('on PostgreSQL, the connection string from EVENTSTORE_CONNECTION_STRING_FILE: that file', async (world) => {
  const file = join(world.dir, 'connection-string');
  await writeFile(file, `${await world.cluster!.connectionStringFor('hint_file')}\n`, { mode: 0o600 });
  const node = await started(world, 'pg-file', { EVENTSTORE_CONNECTION_STRING_FILE: file });
  try {
    assert.match(printedCommand(node), `EVENTSTORE_CONNECTION_STRING_FILE=${file} npm run --silent cli -- keys create`);
    await keyFromPrintedCommandWorks(node, 'file-game');
  } finally {
    await node.kill();
  }
});

onPostgres('on PostgreSQL, a connection string with a password: printed without it, and the next line says so', async (world) => {
  await world.cluster!.sql(`CREATE ROLE hint LOGIN SUPERUSER PASSWORD 'secret-pw'`);
  const withPassword = (await world.cluster!.connectionStringFor('hint_pw')).replace('postgres@', 'hint:secret-pw@');
  const node = await started(world, 'pg-pw', { EVENTSTORE_CONNECTION_STRING: withPassword });
  try {
    const printed = printedCommand(node);
    assert.not.match(node.output(), 'secret-pw');
    assert.match(printed, `EVENTSTORE_CONNECTION_STRING='${withPassword.replace('secret-pw', '***')}' npm run --silent cli -- keys create`);
    assert.match(node.output(), /\n +\(put the password back in place of \*\*\*, or give the service EVENTSTORE_CONNECTION_STRING_FILE/);
    // With the password put back, as the line says, the command works.
    const restored = { output: () => node.output().replace('hint:***@', 'hint:secret-pw@') } as ServiceProcess;
    const { key } = JSON.parse(await shell(`${printedCommand(restored).replace('<your-game>', 'pw-game').replace('<Your Game>', 'My Game')} --json`)) as { key: string };
    await keyAccepted(node, key);
  } finally {
    await node.kill();
  }
});

test.run();
