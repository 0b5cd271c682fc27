// Attack: read the store's password from what the service prints or answers. A connection
// string is redacted by reading it as its driver does (node-postgres's own parser decides here
// what the password is), so a password holding `@`, `:`, `/`, `#`, `%` or spaces, a `password` or
// `sslpassword` parameter, or an unknown one, never shows. On PostgreSQL with such a password the
// start-up line, the JSON `listening` log, the CLI and `/readyz` with the database down show none
// of it, and anonymous `/readyz` callers learn a reason code, not the server.
import { parse } from 'pg-connection-string';
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';
import { redactedConnectionString } from '../../src/store/connectionString.js';
import { eventually } from '../support/eventually.js';
import { postgresBinaries, startCluster } from '../support/postgres.js';
import { cliJson, runToEnd, startServiceProcess } from '../support/serviceProcess.js';
import { createSimulator } from '../../src/community/simulator.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Strings whose secrets are the words `hunter` and `sekrit` (each secret holds one). */
const HOSTILE = [
  'postgresql://bridge:p@ss@hunter@db.example:5432/bridge',
  'postgresql://bridge:hunter@@@db.example/bridge',
  'postgresql://bridge:a:b:hunter@db.example/bridge',
  'postgres://bridge:hun ter%zz@db.example/bridge',
  'postgresql://bridge:hunter%40x@db.example:6543/bridge?sslmode=disable',
  'postgresql://bridge@db.example/bridge?password=hunter&sslpassword=sekrit',
  'postgresql://bridge@db.example/bridge?PASSWORD=hunter&x_token=sekrit',
  'postgresql://bridge:hunter@db.example/bridge?application_name=a@b&password=sekrit@x',
  'postgresql://bridge:12#hunter@db.example/bridge',
  'postgresql://bridge:12/hunter@db.example/bridge',
  'postgresql://bridge:12?hunter@db.example/bridge',
  'postgresql://bridge:hunter@/bridge?host=/run/postgresql',
  'postgresql://bridge:hunter@[2001:db8::7]:5433/bridge',
  'postgresql://bridge:hunter@db.example/bridge?hunter=1&sekrit',
  'esdb://admin:p@hunter@db.example:2113?tls=false',
  'esdb://admin:hun/ter@db.example:2113?tls=false',
  'kurrentdb+discover://admin:hunter?x@db.example:2113?tls=false',
];

const SECRETS = /hunter|hun ter|sekrit/i;
const WHERE = ['user', 'host', 'port', 'database'] as const;

test('hostile strings: nothing of a secret shows, and the driver reads the redacted string as the same server', () => {
  for (const original of HOSTILE) {
    const shown = redactedConnectionString(original);
    assert.not.match(decodeURIComponent(shown.replace(/%(?![0-9a-f]{2})/gi, '%25')), SECRETS, `${original} → ${shown}`);
    if (!original.startsWith('postgres')) continue;
    const driver = parse(original);
    // Either nothing but the scheme (the driver would read a piece of the password as the server)...
    if (/^postgres(ql)?:\/\/\*\*\*$/.test(shown)) {
      assert.ok(original.includes('@'), `${original}: hidden whole only when an @ was misread`);
      continue;
    }
    // ...or the same user, host, port and database as the driver reads them, and a password iff it has one.
    const again = parse(shown);
    for (const field of WHERE) assert.is(again[field], driver[field], `${original}: ${field}`);
    assert.is(Boolean(again.password), Boolean(driver.password), `${original}: a password is said to be there`);
  }
});

test('ordinary strings are shown whole but for the password', () => {
  assert.is(
    redactedConnectionString('postgresql://bridge:s3cret@db:5432/bridge?sslmode=disable&pool_size=4'),
    'postgresql://bridge:***@db:5432/bridge?sslmode=disable&pool_size=4',
  );
  assert.is(redactedConnectionString('postgresql://db/bridge'), 'postgresql://db/bridge');
  assert.is(redactedConnectionString('esdb://admin:changeit@localhost:2113?tls=false'), 'esdb://admin:***@localhost:2113?tls=false');
  assert.is(redactedConnectionString('esdb+discover://cluster.example:2113'), 'esdb+discover://cluster.example:2113');
});

test.run();

const onPostgres = suite('a password with @ on PostgreSQL');
const binaries = postgresBinaries();
if ('missing' in binaries) {
  console.log(`skipped: a password with @ on PostgreSQL — ${binaries.missing}`);
} else {
  onPostgres('start-up line, listening log, CLI and /readyz (database down) show no piece of it; anonymous callers get a reason code only', async () => {
    const cluster = await startCluster();
    const simulator = createSimulator({ users: [] });
    const sim = await simulator.listen();
    const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-secrets-'));
    try {
      // The cluster trusts every local connection: the password is only ever printed, never checked.
      const connectionString = `${(await cluster.connectionStringFor('secrets')).replace('postgres@', 'postgres:p@ss@hunter2@')}&sslpassword=sekrit`;
      assert.is(parse(connectionString).password, 'p@ss@hunter2', 'the driver reads the whole password');
      const cli = await runToEnd(['store', 'migrate'], { EVENTSTORE_CONNECTION_STRING: connectionString });
      assert.is(cli.code, 0, cli.stderr);
      assert.match(cli.stderr, /^Store: PostgreSQL at postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/secrets\?sslmode=disable&sslpassword=\*\*\*\n$/);
      assert.not.match(cli.stdout + cli.stderr, SECRETS);

      const node = await startServiceProcess({ dataDir, communityUrl: sim.url, nodeId: 'secret-node', env: { EVENTSTORE_CONNECTION_STRING: connectionString } });
      try {
        const issued = await runToEnd(['keys', 'create', '--app-id', 'ops', '--permissions', 'audit:read', '--all-apps', '--json'], {
          EVENTSTORE_CONNECTION_STRING: connectionString,
        });
        const { key } = cliJson<{ key: string }>(issued);
        await eventually(async () => (await node.request('GET', '/readyz', { apiKey: key })).body?.position !== undefined, { what: 'the node to know the operator key' });
        const output = node.output();
        assert.match(output, /listening on http:\/\/127\.0\.0\.1:\d+ \(store: PostgreSQL at postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1/);
        assert.ok(output.split('\n').some((line) => line.startsWith('{') && JSON.parse(line).msg === 'listening'));
        assert.not.match(output, SECRETS);

        await cluster.stop();
        const anonymous = await eventually(async () => {
          const answer = await node.request('GET', '/readyz');
          return answer.status === 503 ? answer : undefined;
        }, 'the node to say it is not ready');
        assert.equal(Object.keys(anonymous.body), ['status', 'reason'], anonymous.text);
        assert.match(anonymous.body.reason, /^[a-z_]+$/);
        assert.not.match(anonymous.text, /postgres|127\.0\.0\.1|secrets|hunter|sekrit/);
        const operator = await node.request('GET', '/readyz', { apiKey: key });
        assert.is(operator.status, 503);
        assert.is(operator.body.reason, anonymous.body.reason);
        assert.type(operator.body.detail, 'string');
        assert.not.match(operator.text, SECRETS);
        await eventually(() => node.output().includes('"msg":"not ready"'), 'the detail to reach the log');
        assert.not.match(node.output(), SECRETS);
      } finally {
        await node.kill();
      }
    } finally {
      await cluster.destroy();
      await sim.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}
onPostgres.run();
