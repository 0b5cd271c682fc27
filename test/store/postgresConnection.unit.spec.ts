// EVENTSTORE_CONNECTION_STRING with a postgresql:// scheme: the scheme chooses PostgreSQL, the
// configuration refuses what cannot be used (no host, a bad pool_size, a CA file that cannot be
// read) in a line naming the variable, and the driver gets what the string says (TLS, pool size).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { describeStore } from '../../src/core.js';
import { connectionStringProblem, redactedConnectionString, storeKindOf } from '../../src/store/connectionString.js';
import { POOL_SIZE, postgresConnection, postgresFailureReason } from '../../src/store/postgresConnection.js';

const configError = (connectionString: string) => {
  try {
    loadConfig({ EVENTSTORE_CONNECTION_STRING: connectionString });
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
};

test('postgresql:// and postgres:// choose PostgreSQL and pass validation; esdb:// still chooses EventStoreDB', () => {
  for (const s of ['postgresql://bridge:pw@db.example:5432/bridge', 'postgres://db.example/bridge?sslmode=verify-full', 'postgresql:///bridge?host=/run/postgresql']) {
    assert.is(storeKindOf(s), 'postgresql', s);
    assert.is(connectionStringProblem(s), undefined, s);
    assert.is(loadConfig({ EVENTSTORE_CONNECTION_STRING: s }).eventStoreConnectionString, s);
  }
  assert.is(storeKindOf('esdb://localhost:2113?tls=false'), 'eventstoredb');
  assert.is(storeKindOf('mysql://localhost/x'), undefined);
});

test('a string without a host, a bad pool_size or an unknown scheme is refused in a line naming the variable', () => {
  assert.is(
    configError('postgresql:///bridge'),
    'Invalid configuration:\n  EVENTSTORE_CONNECTION_STRING: names no host (e.g. postgresql://bridge@db.example:5432/bridge, or ?host=/run/postgresql for a socket directory)',
  );
  assert.match(configError('postgres://user:pw@/bridge')!, /EVENTSTORE_CONNECTION_STRING: names no host/);
  for (const size of ['0', '101', 'ten', '2.5', '']) {
    assert.is(
      configError(`postgresql://db.example/bridge?pool_size=${size}`),
      `Invalid configuration:\n  EVENTSTORE_CONNECTION_STRING: pool_size must be a whole number from ${POOL_SIZE.min} to ${POOL_SIZE.max}`,
      `pool_size=${size}`,
    );
  }
  assert.match(configError('mysql://db.example/bridge')!, /must start with postgresql:\/\/, postgres:\/\/, esdb:\/\//);
  assert.is(
    configError('postgresql://db.example/bridge?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem'),
    'Invalid configuration:\n  EVENTSTORE_CONNECTION_STRING: cannot read /nonexistent/ca.pem, named by sslrootcert, sslcert or sslkey (ENOENT)',
  );
});

test('the driver gets the pool size (10 unless set) and TLS as sslmode and sslrootcert say; pool_size does not reach it', () => {
  const plain = postgresConnection('postgresql://bridge:pw@db.example:6543/events');
  assert.is(plain.poolSize, POOL_SIZE.default);
  assert.is(POOL_SIZE.default, 10);
  assert.equal([plain.client.host, plain.client.port, plain.client.database, plain.client.user, plain.client.password], ['db.example', 6543, 'events', 'bridge', 'pw']);

  const sized = postgresConnection('postgresql://db.example/events?pool_size=4&sslmode=disable');
  assert.is(sized.poolSize, 4);
  assert.is(sized.client.ssl, false);
  assert.not.ok('pool_size' in sized.client);

  const dir = mkdtempSync(join(tmpdir(), 'community-bridge-pg-ca-'));
  try {
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n');
    const tls = postgresConnection(`postgresql://db.example/events?sslmode=verify-full&sslrootcert=${ca}`);
    assert.equal(
      { ...(tls.client.ssl as object) },
      { ca: '-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n' },
      'the CA file is read, and the server verified against it',
    );
    const noVerify = postgresConnection('postgresql://db.example/events?sslmode=no-verify');
    assert.equal({ ...(noVerify.client.ssl as object) }, { rejectUnauthorized: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('passwords are redacted, in the credentials and in a password parameter; describeStore names PostgreSQL', () => {
  assert.is(redactedConnectionString('postgresql://bridge:s3cret@db.example:5432/bridge'), 'postgresql://bridge:***@db.example:5432/bridge');
  assert.is(
    redactedConnectionString('postgres://db.example/bridge?user=bridge&password=s3cret&sslmode=verify-full'),
    'postgres://db.example/bridge?user=bridge&password=***&sslmode=verify-full',
  );
  const config = loadConfig({ EVENTSTORE_CONNECTION_STRING: 'postgresql://bridge:s3cret@db.example/bridge' });
  assert.is(describeStore(config), 'PostgreSQL at postgresql://bridge:***@db.example/bridge');
  assert.is(
    describeStore(loadConfig({ EVENTSTORE_CONNECTION_STRING: 'esdb://admin:changeit@localhost:2113?tls=false' })),
    'EventStoreDB at esdb://admin:***@localhost:2113?tls=false',
  );
});

test('a failure is told in one line, also a refused connection that comes without a message of its own', () => {
  const refused = new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], '');
  assert.is(postgresFailureReason(refused), 'connect ECONNREFUSED ::1:5432');
  assert.is(postgresFailureReason(new Error('first line\nsecond line')), 'first line');
  assert.is(postgresFailureReason('plain'), 'plain');
});

test.run();
