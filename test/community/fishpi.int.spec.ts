// The fishpi adapter against the platform simulator over real HTTP: every call's success, and
// every kind of failure classified as the port promises.
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FishpiPlatform, type FishpiPlatformOptions } from '../../src/community/fishpi.js';
import { createSimulator, SIMULATOR_KEY, type SimulatorOptions, type SimulatorUserSeed } from '../../src/community/simulator.js';
import { NotConfiguredError, PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../../src/domain/errors.js';
import { eventually } from '../support/eventually.js';
import { rejects } from '../support/rejects.js';

const ALICE = '1630399136785';
const BOB = '1630399136786';
const ALL_KEYS = { point: SIMULATOR_KEY, metal: SIMULATOR_KEY, item: SIMULATOR_KEY, liveness: SIMULATOR_KEY };

const seedUsers = (): SimulatorUserSeed[] => [
  { oId: ALICE, userName: 'alice', nickname: 'Alice', avatar: 'https://file.fishpi.cn/alice.png', points: 100, liveness: 80.2, items: { checkin1day: 2 } },
  { oId: BOB, userName: 'bob', points: 0 },
];

interface World {
  platform: FishpiPlatform;
  simulator: ReturnType<typeof createSimulator>;
  url: string;
}

/** A fresh simulator and an adapter pointed at it (with a trailing slash, as operators write it). */
async function withPlatform(run: (world: World) => Promise<void>, options: { simulator?: SimulatorOptions; adapter?: Partial<FishpiPlatformOptions> } = {}): Promise<void> {
  const simulator = createSimulator({ users: seedUsers(), ...options.simulator });
  const running = await simulator.listen();
  const platform = new FishpiPlatform({
    baseUrl: `${running.url}/`,
    keys: ALL_KEYS,
    timeoutMs: 2000,
    userAgent: 'community-bridge-test/0.1',
    ...options.adapter,
  });
  try {
    await run({ platform, simulator, url: running.url });
  } finally {
    await platform.close();
    await running.close();
  }
}

/** Signs in through the simulator's `sim_user` shortcut and returns the assertion's parameters. */
async function assertionFor(platform: FishpiPlatform, oId: string): Promise<Record<string, string>> {
  const returnTo = 'http://localhost:8090/fishpi/callback?state=abc';
  const login = `${platform.openIdLoginUrl({ returnTo, realm: 'http://localhost:8090' })}&sim_user=${oId}`;
  const response = await fetch(login, { redirect: 'manual', headers: { 'User-Agent': 'browser' } });
  assert.is(response.status, 302);
  const location = new URL(response.headers.get('location')!);
  assert.is(location.searchParams.get('state'), 'abc', "return_to's own query is kept");
  return Object.fromEntries(location.searchParams);
}

// ---- user lookup ----

test('getUser returns the profile of a known oId', () =>
  withPlatform(async ({ platform }) => {
    assert.equal(await platform.getUser(ALICE), { oId: ALICE, userName: 'alice', nickname: 'Alice', avatar: 'https://file.fishpi.cn/alice.png' });
  }));

test('getUser returns null for an oId the platform does not know', () =>
  withPlatform(async ({ platform }) => {
    assert.is(await platform.getUser('999'), null);
  }));

test('getUser sees the current userName after a rename', () =>
  withPlatform(async ({ platform, simulator }) => {
    simulator.state.updateUser(ALICE, { userName: 'alice2' });
    assert.is((await platform.getUser(ALICE))?.userName, 'alice2');
  }));

// ---- points ----

test('editPoints changes the balance and resolves with the transaction message', () =>
  withPlatform(async ({ platform, simulator }) => {
    const message = await platform.editPoints({ userName: 'alice', point: -30, memo: 'shop' });
    assert.match(message, /交易oId为：\d+$/);
    const alice = simulator.state.user(ALICE)!;
    assert.is(alice.points, 70);
    assert.equal(
      alice.ledger.map((e) => [e.point, e.memo, e.source]),
      [[-30, 'shop', undefined]],
    );
  }));

test('editPoints sends the four source fields only when a source is given', () =>
  withPlatform(async ({ platform, simulator }) => {
    const source = { appId: 'game-1', appName: 'Game', scene: 'payment' as const, requestId: 'req:1' };
    await platform.editPoints({ userName: 'alice', point: 5, memo: 'win', source });
    assert.equal(simulator.state.user(ALICE)!.ledger[0]!.source, {
      sourceAppId: 'game-1',
      sourceAppName: 'Game',
      sourceScene: 'payment',
      requestId: 'req:1',
    });
  }));

test('a code -1 answer is a PlatformRejectedError carrying the platform message', () =>
  withPlatform(async ({ platform }) => {
    const source = { appId: 'game-1', appName: 'Game', scene: 'payment' as const, requestId: 'once' };
    await platform.editPoints({ userName: 'alice', point: 1, memo: 'a', source });
    const error = await rejects(platform.editPoints({ userName: 'alice', point: 1, memo: 'a', source }), PlatformRejectedError);
    assert.is(error.platformMessage, '请求编号已使用');
    await rejects(platform.editPoints({ userName: 'nobody', point: 1, memo: 'a' }), PlatformRejectedError);
  }));

// ---- medals ----

test('giveMedal and removeMedal resolve with the platform messages', () =>
  withPlatform(async ({ platform, simulator }) => {
    const medal = { userName: 'alice', name: 'VIP', description: 'supporter', attr: 'url=x&backcolor=fff&fontcolor=000', data: '' };
    assert.is(await platform.giveMedal(medal), '勋章安装成功。');
    assert.equal(
      simulator.state.user(ALICE)!.medals.map((m) => m.name),
      ['VIP'],
    );
    assert.is(await platform.removeMedal({ userName: 'alice', name: 'VIP' }), '勋章移除成功。');
    assert.equal(simulator.state.user(ALICE)!.medals, []);
  }));

test("a medal for an unknown user (the platform's HTTP 500) is PlatformUnavailableError, sent", () =>
  withPlatform(async ({ platform }) => {
    const error = await rejects(platform.removeMedal({ userName: 'nobody', name: 'VIP' }), PlatformUnavailableError);
    assert.is(error.sent, true);
  }));

// ---- items and liveness ----

test('queryItems and editItems return the bag', () =>
  withPlatform(async ({ platform }) => {
    assert.equal(await platform.queryItems('alice'), { checkin1day: 2 });
    assert.equal(await platform.queryItems('bob'), {});
    const edited = await platform.editItems({ userName: 'alice', item: 'nameCard', sum: 3 });
    assert.ok(edited.message);
    assert.equal(edited.bag, { checkin1day: 2, nameCard: 3 });
  }));

test('an item deduction below zero reports success with the bag unchanged', () =>
  withPlatform(async ({ platform, simulator }) => {
    const edited = await platform.editItems({ userName: 'alice', item: 'checkin1day', sum: -5 });
    assert.equal(edited.bag, { checkin1day: 2 });
    assert.equal(simulator.state.user(ALICE)!.items, { checkin1day: 2 });
  }));

test('liveness resolves with the number of a code-less answer', () =>
  withPlatform(async ({ platform }) => {
    assert.is(await platform.liveness('alice'), 80.2);
    await rejects(platform.liveness('nobody'), PlatformRejectedError);
  }));

// ---- gold-finger keys ----

test('per-type keys: each call carries the key of its type', () =>
  withPlatform(
    async ({ platform }) => {
      await platform.editPoints({ userName: 'alice', point: 1, memo: 'k' });
      await platform.giveMedal({ userName: 'alice', name: 'M', description: 'd', attr: '', data: '' });
      await platform.queryItems('alice');
      await platform.liveness('alice');
    },
    {
      simulator: { goldFingerKeys: { point: 'kp', metal: 'km', item: 'ki', liveness: 'kl' } },
      adapter: { keys: { point: 'kp', metal: 'km', item: 'ki', liveness: 'kl' } },
    },
  ));

test('one key for all types is refused for the types it does not open, naming the type, never the key', () =>
  withPlatform(
    async ({ platform }) => {
      await platform.editPoints({ userName: 'alice', point: 1, memo: 'k' });
      const error = await rejects(platform.liveness('alice'), PlatformRejectedError);
      assert.match(error.message, 'liveness');
      assert.not.match(error.message, 'kp');
    },
    {
      simulator: { goldFingerKeys: { point: 'kp', metal: 'km', item: 'ki', liveness: 'kl' } },
      adapter: { keys: { point: 'kp', metal: 'kp', item: 'kp', liveness: 'kp' } },
    },
  ));

test('a type without a configured key is a configuration error naming the setting, without calling the platform', () =>
  withPlatform(
    async ({ platform, simulator }) => {
      const error = await rejects(platform.giveMedal({ userName: 'alice', name: 'M', description: 'd', attr: '', data: '' }), NotConfiguredError);
      assert.match(error.message, /^COMMUNITY_KEY \(or COMMUNITY_KEY_MEDAL\), the community platform's gold-finger key for medals, is not set on this service/);
      assert.is(simulator.state.calls('/user/edit/give-metal'), 0);
    },
    { adapter: { keys: { point: SIMULATOR_KEY } } },
  ));

// ---- failures ----

test('HTTP 500 and a garbage answer are PlatformUnavailableError, sent', () =>
  withPlatform(async ({ platform, simulator }) => {
    for (const kind of ['http500', 'garbage'] as const) {
      simulator.state.failNext(3, kind);
      for (const call of [platform.getUser(ALICE), platform.editPoints({ userName: 'alice', point: 1, memo: 'x' }), platform.liveness('alice')]) {
        const error = await rejects(call, PlatformUnavailableError, kind);
        assert.is(error.sent, true);
        assert.not.match(error.message, SIMULATOR_KEY);
      }
    }
    assert.is(simulator.state.user(ALICE)!.points, 100, 'the failed calls changed nothing');
  }));

test('a closed port is PlatformUnavailableError, not sent', async () => {
  const running = await createSimulator().listen();
  await running.close();
  const platform = new FishpiPlatform({ baseUrl: running.url, keys: ALL_KEYS, timeoutMs: 2000, userAgent: 'test' });
  try {
    for (const call of [platform.getUser(ALICE), platform.editPoints({ userName: 'alice', point: 1, memo: 'x' })]) {
      const error = await rejects(call, PlatformUnavailableError);
      assert.is(error.sent, false);
    }
  } finally {
    await platform.close();
  }
});

test('an answer slower than timeoutMs is PlatformTimeoutError: the call gives up before the platform has even taken the write', () =>
  withPlatform(
    async ({ platform, simulator }) => {
      simulator.state.setDelay(2000);
      await rejects(platform.editPoints({ userName: 'alice', point: 1, memo: 'slow' }), PlatformTimeoutError);
      // The simulator records a request when its delay is over: none yet, so the call did not wait for it.
      assert.equal(simulator.state.arrivals('/user/edit/points'), [], 'the delayed answer was not awaited');
    },
    { adapter: { timeoutMs: 300 } },
  ));

test('an answer trickling in slower than timeoutMs is cut at the deadline, though it would end well', async () => {
  // Each byte resets the socket's idle timer; only the wall-clock deadline ends this call before
  // the answer, which is valid once all of it is in.
  const DRIPS = 100;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    let dripped = 0;
    const drip = setInterval(() => (++dripped < DRIPS ? res.write(' ') : res.end('{"liveness":1}')), 50);
    res.on('close', () => clearInterval(drip));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const platform = new FishpiPlatform({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys: ALL_KEYS,
    timeoutMs: 300,
    userAgent: 'test',
  });
  try {
    await rejects(platform.liveness('alice'), PlatformTimeoutError, 'a call whose answer trickles in');
  } finally {
    await platform.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** An adapter in front of a stand-in platform server; both closed after `run`. */
async function withServer(handler: RequestListener, run: (platform: FishpiPlatform, server: Server, url: string) => Promise<void>, baseSuffix = ''): Promise<void> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const platform = new FishpiPlatform({ baseUrl: `${url}${baseSuffix}`, keys: ALL_KEYS, timeoutMs: 2000, userAgent: 'bridge-test/1' });
  try {
    await run(platform, server, url);
  } finally {
    await platform.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    req
      .setEncoding('utf8')
      .on('data', (chunk: string) => (text += chunk))
      .on('end', () => resolve(text));
  });

test('requests carry the User-Agent and Accept headers, GET query parameters, POST JSON bodies, under the base path', async () => {
  const seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
  await withServer(
    async (req, res) => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: await readBody(req) });
      const json = req.url!.includes('getInfoById') ? { code: 0, data: { userName: 'alice' } } : { liveness: 1 };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(json));
    },
    async (platform) => {
      await platform.getUser('16 30&x');
      await platform.liveness('alice');
    },
    '/base/',
  );
  const [get, post] = seen;
  assert.is(get!.method, 'GET');
  assert.is(get!.url, '/base/api/user/getInfoById?userId=16+30%26x');
  assert.is(post!.method, 'POST');
  assert.is(post!.url, '/base/user/liveness');
  assert.is(post!.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(post!.body), { userName: 'alice', goldFingerKey: SIMULATOR_KEY });
  for (const { headers } of seen) {
    assert.is(headers['user-agent'], 'bridge-test/1');
    assert.is(headers.accept, 'application/json, text/plain');
  }
});

test('a redirect is not followed: PlatformUnavailableError, sent', async () => {
  const paths: string[] = [];
  await withServer(
    (req, res) => {
      paths.push(req.url!);
      if (req.url === '/login') res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"liveness":1}');
      else res.writeHead(302, { Location: '/login' }).end('moved');
    },
    async (platform) => {
      const error = await rejects(platform.liveness('alice'), PlatformUnavailableError);
      assert.is(error.sent, true);
      assert.match(error.message, 'HTTP 302');
    },
  );
  assert.equal(paths, ['/user/liveness']);
});

test('an answer over 1 MiB is an unexpected answer, sent, whether announced or streamed', async () => {
  const chunk = Buffer.alloc(64 * 1024, ' ');
  for (const announced of [true, false]) {
    await withServer(
      (_req, res) => {
        res.writeHead(200, announced ? { 'Content-Length': String(4 * 1024 * 1024) } : {});
        res.write('{"liveness":1');
        const pump = setInterval(() => res.write(chunk), 1);
        res.on('close', () => clearInterval(pump));
      },
      async (platform) => {
        const error = await rejects(platform.liveness('alice'), PlatformUnavailableError);
        assert.is(error.sent, true);
        assert.match(error.message, 'unexpected answer');
      },
    );
  }
});

test('a connection reset after the request arrived is PlatformUnavailableError, sent', async () => {
  for (const cut of ['reset', 'hang-up after headers'] as const) {
    await withServer(
      (req, res) => {
        if (cut === 'reset') return req.socket.resetAndDestroy();
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
        res.write('{"liveness"');
        setTimeout(() => req.socket.destroy(), 20);
      },
      async (platform) => {
        const error = await rejects(platform.editPoints({ userName: 'alice', point: 1, memo: 'x' }), PlatformUnavailableError, cut);
        assert.is(error.sent, true, cut);
      },
    );
  }
});

test('keep-alive connections carry consecutive calls, failed ones included; close() releases them', async () => {
  const sockets = new Set<unknown>();
  let closed = 0;
  let calls = 0;
  await withServer(
    (req, res) => {
      if (!sockets.has(req.socket)) req.socket.on('close', () => closed++);
      sockets.add(req.socket);
      if (++calls % 2 === 0) res.writeHead(500, { 'Content-Type': 'text/html' }).end(`<html>${'x'.repeat(50_000)}</html>`);
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"liveness":1}');
    },
    async (platform) => {
      for (let i = 0; i < 3; i++) {
        assert.is(await platform.liveness('alice'), 1);
        await rejects(platform.liveness('alice'), PlatformUnavailableError);
      }
      // undici may open a second connection when the next call comes within the tick that ends an answer.
      assert.ok(sockets.size <= 2, `${sockets.size} connections for 6 calls`);
      await platform.close();
      await eventually(() => closed === sockets.size, { what: () => `the pooled sockets to close (${closed} of ${sockets.size})` });
    },
  );
});

// ---- OpenID ----

test('openIdLoginUrl asks for checkid_setup with identifier_select, without a double slash', () =>
  withPlatform(async ({ platform, url }) => {
    const login = new URL(platform.openIdLoginUrl({ returnTo: 'https://game.example/cb?s=1', realm: 'https://game.example' }));
    assert.is(`${login.origin}${login.pathname}`, `${url}/openid/login`);
    assert.equal(Object.fromEntries(login.searchParams), {
      'openid.ns': 'http://specs.openid.net/auth/2.0',
      'openid.mode': 'checkid_setup',
      'openid.return_to': 'https://game.example/cb?s=1',
      'openid.realm': 'https://game.example',
      'openid.identity': 'http://specs.openid.net/auth/2.0/identifier_select',
      'openid.claimed_id': 'http://specs.openid.net/auth/2.0/identifier_select',
    });
    assert.is(platform.openIdEndpoint, `${url}/openid`);
  }));

test('identityPattern captures the oId of an identity on this platform only', async () => {
  const platform = new FishpiPlatform({ baseUrl: 'https://fishpi.cn/', keys: {}, timeoutMs: 1000, userAgent: 'test' });
  assert.is(platform.openIdEndpoint, 'https://fishpi.cn/openid');
  assert.is(platform.identityPattern.exec('https://fishpi.cn/openid/id/1630399136785')?.[1], '1630399136785');
  for (const other of ['https://fishpixcn/openid/id/1', 'https://fishpi.cn.evil/openid/id/1', 'https://fishpi.cn/openid/id/1x']) {
    assert.not.ok(platform.identityPattern.test(other), other);
  }
  await platform.close();
});

test('verifyAssertion: a genuine assertion once, then never again; a tampered one never', () =>
  withPlatform(async ({ platform }) => {
    const genuine = await assertionFor(platform, ALICE);
    assert.is(platform.identityPattern.exec(genuine['openid.identity']!)?.[1], ALICE);
    assert.is(genuine['openid.op_endpoint'], platform.openIdEndpoint);
    assert.is(await platform.verifyAssertion(genuine), true);
    assert.is(await platform.verifyAssertion(genuine), false, 'replayed nonce');

    const other = await assertionFor(platform, ALICE);
    const bobIdentity = other['openid.identity']!.replace(ALICE, BOB);
    assert.is(await platform.verifyAssertion({ ...other, 'openid.identity': bobIdentity, 'openid.claimed_id': bobIdentity }), false);
  }));

/** A stand-in verify endpoint answering a fixed text, to exercise the parsing alone. */
async function verifyAnswering(text: string): Promise<boolean | Error> {
  const server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(text));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const platform = new FishpiPlatform({ baseUrl: `http://127.0.0.1:${port}`, keys: {}, timeoutMs: 2000, userAgent: 'test' });
  try {
    return await platform.verifyAssertion({ 'openid.mode': 'id_res' });
  } catch (error) {
    return error as Error;
  } finally {
    await platform.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('the verify answer is read line by line, extra lines in any order ignored', async () => {
  const ns = 'ns:http://specs.openid.net/auth/2.0';
  assert.is(await verifyAnswering(`${ns}\nis_valid:true\nscope:profile.read\ntoken_type:Bearer\naccess_token:abc\nexpires_in:3600\n`), true);
  assert.is(await verifyAnswering(`${ns}\r\nscope:profile.read\r\nis_valid:true\r\n`), true);
  assert.is(await verifyAnswering(`${ns}\nis_valid:false\nscope:profile.read\n`), false);
  assert.is(await verifyAnswering(`${ns}\nnot_is_valid:true\nis_valid:false\n`), false);
  assert.instance(await verifyAnswering('<html>login</html>'), PlatformUnavailableError);
});

test.run();
