// Attack: open thousands of connections from one address and send each a request head that never
// ends (or nothing at all), until the node has no descriptors left for anyone. One address holds
// at most HTTP_MAX_CONNECTIONS_PER_IP sockets (the rest are closed as soon as they are accepted),
// a head must be whole within HTTP_HEADERS_TIMEOUT_MS and a silent socket is closed as late, so
// keyed admin requests from another address (127.0.0.1; the attack comes from 127.0.0.2) go on
// being answered. The node runs as a child
// process under `ulimit -n 1024`, far below what the attack opens.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator } from '../../src/community/simulator.js';
import { loadConfig } from '../../src/config.js';
import { openFilesSoftLimit } from '../../src/openFilesLimit.js';
import { startUnderLimit } from '../console/serviceUnderLimit.js';
import { eventually } from '../support/eventually.js';
import { ALICE, defaultUsers } from '../support/harness.js';
import { issueKey } from '../support/serviceProcess.js';

const ATTACKER = '127.0.0.2';
const HALF_SENT = 2500;
const SILENT = 500;
const PER_ADDRESS = 300;

interface Attack {
  /** Sockets the node has closed (or refused) so far. */
  closed(): number;
  /** Sockets the node answered 408. */
  timedOut(): number;
  end(): void;
}

/** `count` sockets from `localAddress`, each sending `head` (a request head without its end) or nothing. */
async function open(port: number, count: number, head: string | undefined): Promise<Attack> {
  const sockets: Socket[] = [];
  let closed = 0;
  let timedOut = 0;
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect({ port, host: '127.0.0.1', localAddress: ATTACKER }, () => {
            if (head) socket.write(head);
            resolve();
          });
          socket.on('data', (data) => {
            if (data.toString('latin1').startsWith('HTTP/1.1 408')) timedOut++;
          });
          socket.on('error', () => undefined);
          socket.on('close', () => {
            closed++;
            resolve();
          });
          sockets.push(socket);
        }),
    ),
  );
  return {
    closed: () => closed,
    timedOut: () => timedOut,
    end: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

test(`${HALF_SENT} half-sent requests and ${SILENT} silent sockets from one address: keyed admin requests from another are answered throughout, and the node closes every one`, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-test-'));
  const sim = await createSimulator({ users: defaultUsers() }).listen();
  const { key } = await issueKey(dataDir);
  const service = await startUnderLimit({
    entry: 'start',
    openFiles: 1024,
    dataDir,
    communityUrl: sim.url,
    env: { HTTP_MAX_CONNECTIONS_PER_IP: String(PER_ADDRESS), HTTP_HEADERS_TIMEOUT_MS: '5000' },
  });
  const attacks: Attack[] = [];
  try {
    const port = Number(new URL(service.url).port);
    const admin = async () => {
      const res = await fetch(`${service.url}/adm/vip/${ALICE.oId}`, { headers: { apiKey: key } });
      return res.status;
    };
    assert.is(await admin(), 200);
    attacks.push(await open(port, HALF_SENT, `GET /adm/vip/${ALICE.oId} HTTP/1.1\r\nHost: bridge\r\napiKey: ${key}\r\n`));
    attacks.push(await open(port, SILENT, undefined));
    const [halfSent, silent] = attacks as [Attack, Attack];
    // Past its sockets, the address's are closed as they are accepted, long before any timeout.
    await eventually(() => halfSent.closed() + silent.closed() >= HALF_SENT + SILENT - PER_ADDRESS, {
      what: () => `the node to close the sockets past ${PER_ADDRESS} (${halfSent.closed() + silent.closed()} closed)`,
      timeoutMs: 2000,
    });
    assert.ok(halfSent.closed() + silent.closed() <= HALF_SENT + SILENT - PER_ADDRESS + 5, 'the sockets the address may hold are held until their timeout');

    // While the attacker holds all its address may hold, another address is served: the player's
    // own keyed requests, over fresh connections and at once.
    const statuses = await Promise.all(Array.from({ length: 20 }, admin));
    assert.equal(statuses, Array(20).fill(200));
    assert.is((await fetch(`${service.url}/readyz`)).status, 200);

    // Every socket of the attack is closed by the node in the end: heads that never end get 408.
    await eventually(() => halfSent.closed() === HALF_SENT && silent.closed() === SILENT, {
      what: () => `the node to close every attacking socket (${halfSent.closed()} of ${HALF_SENT} half-sent, ${silent.closed()} of ${SILENT} silent)`,
      timeoutMs: 20_000,
    });
    assert.ok(halfSent.timedOut() > 0, 'the half-sent requests that were held were answered 408');
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    const refused = Number(/^http_connections_refused_total\{bound="address"\} (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(refused >= HALF_SENT + SILENT - PER_ADDRESS, `http_connections_refused_total{bound="address"} ${refused}`);
    assert.is(await admin(), 200);
    assert.not.ok(
      service.logLines().some((line) => /EMFILE/.test(JSON.stringify(line))),
      'the node never ran out of descriptors',
    );
  } finally {
    for (const attack of attacks) attack.end();
    await service.kill();
    await sim.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('the node keeps sockets for the admin API above its streams: a configuration without that room is refused at start', () => {
  const { sockets, realtime } = loadConfig({});
  assert.ok(sockets.maxConnections > realtime.maxConnections, `${sockets.maxConnections} sockets, ${realtime.maxConnections} streams`);
  assert.ok(sockets.maxConnections <= (openFilesSoftLimit() ?? Number.POSITIVE_INFINITY) - 64, 'descriptors stay for the store and the platform');
  assert.is(loadConfig({ HTTP_MAX_CONNECTIONS: '1000' }).realtime.maxConnections, 950, 'the streams default below a lower socket cap');
  assert.throws(() => loadConfig({ HTTP_MAX_CONNECTIONS: '100', REALTIME_MAX_CONNECTIONS: '100' }), /REALTIME_MAX_CONNECTIONS \(100\) must be below HTTP_MAX_CONNECTIONS \(100\)/);
  assert.throws(
    () => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' }),
    /HTTP_REQUEST_TIMEOUT_MS \(1000\) must be at least HTTP_HEADERS_TIMEOUT_MS \(5000\)/,
  );
});

test.run();
