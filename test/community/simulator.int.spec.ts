// The simulator's own platform rules, the ones the adapter suite does not reach: the User-Agent
// gate, the points validations and source-field rules, medals, the OpenID provider's checks; and
// its fault control over HTTP (`/_faults`, for `npm run dev`).
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator, FAULT_QUEUE_MAX, SIMULATOR_KEY, type SimulatorOptions, type SimulatorState } from '../../src/community/simulator.js';
import { eventually } from '../support/eventually.js';

const ALICE = '1630399136785';
const BOB = '1630399136786';
const NS = 'http://specs.openid.net/auth/2.0';
const SELECT = 'http://specs.openid.net/auth/2.0/identifier_select';
const FIVE_MINUTES = 5 * 60_000;

interface World {
  url: string;
  state: SimulatorState;
  post(path: string, body: unknown): Promise<Record<string, unknown>>;
  /** Posts a points change for alice; `body` overrides the defaults. */
  points(body: Record<string, unknown>): Promise<Record<string, unknown>>;
}

async function withSimulator(run: (world: World) => Promise<void>, options: SimulatorOptions = {}): Promise<void> {
  const simulator = createSimulator({
    users: [
      { oId: ALICE, userName: 'alice', nickname: 'Alice', points: 10 },
      { oId: BOB, userName: 'bob', nickname: 'Bob <script>' },
    ],
    ...options,
  });
  const running = await simulator.listen();
  const post = async (path: string, body: unknown) => {
    const response = await fetch(running.url + path, {
      method: 'POST',
      headers: { 'User-Agent': 'test', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, unknown>;
  };
  const points = (body: Record<string, unknown>) => post('/user/edit/points', { goldFingerKey: SIMULATOR_KEY, userName: 'alice', point: 1, memo: 'test', ...body });
  try {
    await run({ url: running.url, state: simulator.state, post, points });
  } finally {
    await running.close();
  }
}

const source = (overrides: Record<string, unknown> = {}) => ({
  sourceAppId: 'game-1',
  sourceAppName: 'Game',
  sourceScene: 'payment',
  requestId: 'req-1',
  ...overrides,
});

function loginUrl(url: string, overrides: Record<string, string | undefined> = {}): string {
  const params = {
    'openid.ns': NS,
    'openid.mode': 'checkid_setup',
    'openid.return_to': 'http://localhost:8090/fishpi/callback?state=s1',
    'openid.realm': 'http://localhost:8090',
    'openid.identity': SELECT,
    'openid.claimed_id': SELECT,
    ...overrides,
  };
  const defined = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return `${url}/openid/login?${new URLSearchParams(defined)}`;
}

const browse = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init, headers: { 'User-Agent': 'browser', ...init.headers } });

/** The parameters of the redirect a login answers with. */
async function redirectParams(response: Response): Promise<Record<string, string>> {
  assert.is(response.status, 302);
  return Object.fromEntries(new URL(response.headers.get('location')!).searchParams);
}

async function verify(url: string, params: Record<string, string>): Promise<string> {
  const response = await fetch(`${url}/openid/verify`, {
    method: 'POST',
    headers: { 'User-Agent': 'test', 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...params, 'openid.mode': 'check_authentication' }),
  });
  assert.is(response.headers.get('content-type'), 'text/plain; charset=utf-8');
  return response.text();
}

// ---- general ----

test('a request without a User-Agent is refused with HTTP 418', () =>
  withSimulator(async ({ url }) => {
    const status = await new Promise<number | undefined>((resolve, reject) =>
      get(`${url}/api/user/getInfoById?userId=${ALICE}`, (res) => resolve(res.resume().statusCode)).on('error', reject),
    );
    assert.is(status, 418);
  }));

test('a body that is not a JSON object reads as empty', () =>
  withSimulator(async ({ post }) => {
    assert.is((await post('/user/liveness', [{ goldFingerKey: SIMULATOR_KEY, userName: 'alice' }])).code, -1);
  }));

test('calls counts requests per path, failNext fails exactly n of them', () =>
  withSimulator(async ({ url, state }) => {
    state.failNext(1, 'http500');
    const answer = () => fetch(`${url}/api/user/getInfoById?userId=${ALICE}`, { headers: { 'User-Agent': 'test' } });
    assert.is((await answer()).status, 500);
    assert.is((await answer()).status, 200);
    assert.is(state.calls('/api/user/getInfoById'), 2);
  }));

// ---- fault modes ----

/** A points change for alice with this memo; settles with the answer or the network error. */
function pointsRequest(url: string, memo: string, signal?: AbortSignal) {
  return fetch(`${url}/user/edit/points`, {
    method: 'POST',
    headers: { 'User-Agent': 'test', 'Content-Type': 'application/json' },
    body: JSON.stringify({ goldFingerKey: SIMULATOR_KEY, userName: 'alice', point: 1, memo }),
    signal,
  }).then(
    async (response) => ({ answered: true as const, body: (await response.json()) as Record<string, unknown> }),
    (error: Error) => ({ answered: false as const, error: error.cause instanceof Error ? error.cause.message : error.name }),
  );
}

test('fault hang: neither applies nor answers until the client gives up; only the next request of that path', () =>
  withSimulator(async ({ url, state }) => {
    state.faultNext('/user/edit/points', { kind: 'hang' });
    const lookup = await fetch(`${url}/api/user/getInfoById?userId=${ALICE}`, { headers: { 'User-Agent': 'test' } });
    assert.is(lookup.status, 200, 'another path is not affected');
    const giveUp = new AbortController();
    const hung = pointsRequest(url, 'hung', giveUp.signal);
    await eventually(() => state.arrivals('/user/edit/points').length === 1, { what: 'the hung request arrived' });
    giveUp.abort();
    assert.equal(await hung, { answered: false, error: 'AbortError' });
    assert.is(state.pointsApplied('hung'), 0);
    assert.equal((await pointsRequest(url, 'after')).answered, true);
    assert.is(state.pointsApplied('after'), 1);
    assert.equal(
      state.arrivals('/user/edit/points').map((a) => a.body.memo),
      ['hung', 'after'],
    );
    assert.is(state.user(ALICE)!.points, 11);
  }));

test('fault applyThenHang: the change is made, the answer never comes; closing the simulator releases the connection', async () => {
  const simulator = createSimulator({ users: [{ oId: ALICE, userName: 'alice', points: 10 }] });
  const running = await simulator.listen();
  simulator.state.faultNext('/user/edit/points', { kind: 'applyThenHang' }, 2);
  const first = pointsRequest(running.url, 'lost answer 1');
  const second = pointsRequest(running.url, 'lost answer 2');
  await eventually(() => simulator.state.pointsApplied('lost answer 1') === 1 && simulator.state.pointsApplied('lost answer 2') === 1, { what: 'both were applied' });
  await running.close();
  const answers = await Promise.all([first, second]);
  assert.ok(
    answers.every((a) => !a.answered),
    JSON.stringify(answers),
  );
  assert.is(simulator.state.user(ALICE)!.points, 12);
});

test('fault applyThenReset: the change is made and the connection is reset instead of answered', () =>
  withSimulator(async ({ url, state }) => {
    state.faultNext('/user/edit/points', { kind: 'applyThenReset' });
    const answer = await pointsRequest(url, 'reset');
    assert.is(answer.answered, false);
    assert.match(String((answer as { error: string }).error), /ECONNRESET|socket|other side closed/i);
    assert.is(state.pointsApplied('reset'), 1);
    assert.is((await pointsRequest(url, 'next')).answered, true, 'one request only');
  }));

test('fault applyThenDelay applies before the late answer; delayThenApply applies only when it answers', () =>
  withSimulator(async ({ url, state }) => {
    state.faultNext('/user/edit/points', { kind: 'applyThenDelay', ms: 60_000 });
    const giveUp = new AbortController();
    const late = pointsRequest(url, 'applied early', giveUp.signal);
    await eventually(() => state.pointsApplied('applied early') === 1, { what: 'the change was applied' });
    giveUp.abort();
    assert.is((await late).answered, false, 'applied while the answer was still due');

    state.faultNext('/user/edit/points', { kind: 'delayThenApply', ms: 200 });
    const slow = pointsRequest(url, 'applied late');
    await eventually(() => state.arrivals('/user/edit/points').length === 2, { what: 'the request arrived' });
    assert.is(state.pointsApplied('applied late'), 0, 'nothing applied before the delay');
    assert.is(state.arrivals('/user/edit/points')[1]!.answered, false, 'not answered while delayed');
    assert.is((await slow).answered, true);
    assert.is(state.pointsApplied('applied late'), 1);
    assert.equal(
      state.arrivals('/user/edit/points').map((a) => a.answered),
      [false, true],
      'the request given up on was never answered',
    );
  }));

// ---- fault control over HTTP (/_faults) ----

/** What the fault control answers: the queue, how many faults it cleared, or why it refused. */
type ControlBody = { queued?: unknown[]; cleared?: number; code?: number; message?: string };

/** A call to the fault control, with no User-Agent (it is not a platform request). */
async function control(url: string, method: string, body?: unknown): Promise<{ status: number; body: ControlBody }> {
  const response = await fetch(`${url}/_faults`, { method, ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as ControlBody };
}

test('fault control: off unless asked for', () =>
  withSimulator(async ({ url }) => {
    const response = await fetch(`${url}/_faults`, { method: 'POST', headers: { 'User-Agent': 'test' }, body: '{"mode":"http500"}' });
    assert.is(response.status, 404);
  }));

test('fault control: POST queues a fault the next request of its path meets, GET lists the queue, DELETE clears it', () =>
  withSimulator(
    async ({ url, state }) => {
      const queued = await control(url, 'POST', { path: '/user/edit/points', mode: 'apply-then-reset' });
      assert.equal(queued, { status: 200, body: { queued: [{ path: '/user/edit/points', mode: 'apply-then-reset', count: 1 }] } });
      assert.is(state.calls('/_faults'), 0, 'control requests are not platform requests');

      const reset = await pointsRequest(url, 'reset over http');
      assert.is(reset.answered, false);
      assert.is(state.pointsApplied('reset over http'), 1, 'applied, then cut off');
      assert.equal((await control(url, 'GET')).body, { queued: [] }, 'spent');
      assert.is((await pointsRequest(url, 'answered')).answered, true);

      await control(url, 'POST', { path: '/user/edit/points', mode: 'delay-then-apply', ms: 50, count: 2 });
      await control(url, 'POST', { mode: 'http500', count: 2 });
      await control(url, 'POST', { path: '/user/edit/items', mode: 'hang' });
      assert.equal((await control(url, 'GET')).body, {
        queued: [
          { mode: 'http500', count: 2 },
          { path: '/user/edit/points', mode: 'delay-then-apply', ms: 50, count: 2 },
          { path: '/user/edit/items', mode: 'hang', count: 1 },
        ],
      });
      assert.equal(await control(url, 'DELETE'), { status: 200, body: { cleared: 5 } });
      assert.equal((await control(url, 'GET')).body, { queued: [] });
      assert.is((await pointsRequest(url, 'after clearing')).answered, true);
      assert.is(state.pointsApplied('after clearing'), 1);
    },
    { faultControl: true },
  ));

test('fault control: every mode reaches the simulator as its fault', () =>
  withSimulator(
    async ({ url, state }) => {
      await control(url, 'POST', { mode: 'garbage' });
      const garbage = await fetch(`${url}/api/user/getInfoById?userId=${ALICE}`, { headers: { 'User-Agent': 'test' } });
      assert.match(await garbage.text(), /维护中/);

      await control(url, 'POST', { path: '/user/edit/points', mode: 'apply-then-hang' });
      const giveUp = new AbortController();
      const hung = pointsRequest(url, 'applied, unanswered', giveUp.signal);
      await eventually(() => state.pointsApplied('applied, unanswered') === 1, { what: 'applied' });
      giveUp.abort();
      assert.is((await hung).answered, false);

      await control(url, 'POST', { path: '/user/edit/points', mode: 'apply-then-delay', ms: 60_000 });
      const late = new AbortController();
      const slow = pointsRequest(url, 'applied, late', late.signal);
      await eventually(() => state.pointsApplied('applied, late') === 1, { what: 'applied' });
      late.abort();
      assert.is((await slow).answered, false);

      await control(url, 'POST', { path: '/user/edit/points', mode: 'hang' });
      const never = new AbortController();
      const unanswered = pointsRequest(url, 'never applied', never.signal);
      await eventually(() => state.arrivals('/user/edit/points').some((a) => a.body.memo === 'never applied'), { what: 'arrived' });
      never.abort();
      assert.is((await unanswered).answered, false);
      assert.is(state.pointsApplied('never applied'), 0);
    },
    { faultControl: true },
  ));

test('fault control: bad input is a 400 naming the field; past the bounds 409 and 413', () =>
  withSimulator(
    async ({ url }) => {
      const refusals: [unknown, number, RegExp][] = [
        ['not json', 400, /^body: must be a JSON object/],
        [[], 400, /^body: must be a JSON object/],
        [{}, 400, /^mode: is required, one of hang, delay-then-apply, apply-then-delay, apply-then-hang, apply-then-reset, http500, garbage$/],
        [{ mode: 'apply-hang', path: '/user/edit/points' }, 400, /^mode: must be one of /],
        [{ mode: 'apply-then-hang' }, 400, /^path: is required$/],
        [{ mode: 'apply-then-hang', path: 'user/edit/points' }, 400, /^path: must start with \/$/],
        [{ mode: 'apply-then-hang', path: '/user/edit/point' }, 400, /^path: \/user\/edit\/point is not a path the simulator serves$/],
        [{ mode: 'apply-then-hang', path: '/user/edit/points', ms: 10 }, 400, /^ms: is not taken by this mode$/],
        [{ mode: 'apply-then-delay', path: '/user/edit/points' }, 400, /^ms: is required$/],
        [{ mode: 'delay-then-apply', path: '/user/edit/points', ms: 600_001 }, 400, /^ms: must be at most 600000$/],
        [{ mode: 'http500', path: '/user/edit/points' }, 400, /^path: is not taken by http500 and garbage/],
        [{ mode: 'http500', count: 0 }, 400, /^count: must be at least 1$/],
        [{ mode: 'http500', count: 1001 }, 400, /^count: must be at most 1000$/],
        [{ mode: 'http500', count: '2' }, 400, /^count: must be a number$/],
        [{ mode: 'hang', path: '/user/edit/points', extra: true }, 400, /^extra: is not taken by this mode$/],
        [JSON.stringify({ mode: 'hang', path: `/${'x'.repeat(5000)}` }), 413, /^body: must be at most 4096 bytes$/],
      ];
      for (const [body, status, message] of refusals) {
        const answer = await control(url, 'POST', body);
        assert.is(answer.status, status, JSON.stringify(body).slice(0, 80));
        assert.is(answer.body.code, status);
        assert.match(answer.body.message!, message);
      }
      assert.equal((await control(url, 'GET')).body, { queued: [] }, 'nothing refused was queued');

      for (let queued = 0; queued < FAULT_QUEUE_MAX; queued += 1000) await control(url, 'POST', { mode: 'http500', count: 1000 });
      const full = await control(url, 'POST', { mode: 'http500' });
      assert.is(full.status, 409);
      assert.match(full.body.message!, /^count: at most 10000 faults may be queued/);
      assert.equal(await control(url, 'DELETE'), { status: 200, body: { cleared: FAULT_QUEUE_MAX } });

      const put = await fetch(`${url}/_faults`, { method: 'PUT' });
      assert.is(put.status, 405);
      assert.is(put.headers.get('allow'), 'GET, POST, DELETE');
    },
    { faultControl: true },
  ));

test('fault control: a client that is not on loopback is refused', async () => {
  const simulator = createSimulator({ faultControl: true });
  const handle = simulator.app.callback();
  // As if the request came from elsewhere, the simulator being bound to a wider address.
  const server = createServer((req, res) => {
    Object.defineProperty(req.socket, 'remoteAddress', { value: '192.0.2.7' });
    void handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const refused = await control(url, 'POST', { mode: 'http500' });
    assert.is(refused.status, 403);
    assert.match(refused.body.message!, /loopback clients only/);
    assert.is((await control(url, 'GET')).status, 403);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('pointsApplied counts a memo over every user', () =>
  withSimulator(async ({ points, state }) => {
    await points({ memo: 'shared' });
    await points({ memo: 'shared', userName: 'bob' });
    await points({ memo: 'other' });
    assert.is(state.pointsApplied('shared'), 2);
    assert.is(state.pointsApplied('never'), 0);
  }));

// ---- users ----

test('GET /user/:userName answers a flat profile, or code -1', () =>
  withSimulator(async ({ url }) => {
    const read = (name: string) => fetch(`${url}/user/${name}`, { headers: { 'User-Agent': 'test' } }).then((r) => r.json() as Promise<Record<string, unknown>>);
    const alice = await read('alice');
    assert.is(alice.oId, ALICE);
    assert.is(alice.userPoint, 10);
    assert.is(alice.code, undefined);
    assert.equal(await read('nobody'), { code: -1 });
  }));

// ---- points ----

test('points: the point must be a non-zero 32-bit integer', () =>
  withSimulator(async ({ points, state }) => {
    for (const point of [0, 1.5, 2 ** 31, -(2 ** 31) - 1, '5', null]) {
      assert.is((await points({ point })).code, -1, String(point));
    }
    assert.is(state.user(ALICE)!.points, 10);
  }));

test('points: the memo must be 1 to 255 characters', () =>
  withSimulator(async ({ points }) => {
    assert.is((await points({ memo: '' })).code, -1);
    assert.is((await points({ memo: 'x'.repeat(256) })).code, -1);
    assert.is((await points({ memo: 'x'.repeat(255) })).code, 0);
  }));

test('points: a wrong key is refused naming the type', () =>
  withSimulator(async ({ points }) => {
    const answer = await points({ goldFingerKey: 'wrong' });
    assert.is(answer.code, -1);
    assert.match(String(answer.msg), 'point');
  }));

test('points: success answers the transaction oId, a new one each time', () =>
  withSimulator(async ({ points }) => {
    const ids = [await points({}), await points({})].map((a) => /交易oId为：(\d+)$/.exec(String(a.msg))?.[1]);
    assert.ok(ids[0] && ids[1] && ids[0] !== ids[1]);
  }));

test('points: the source fields are all or none, each well formed', () =>
  withSimulator(async ({ points, state }) => {
    assert.is((await points({ requestId: 'only-this' })).code, -1, 'partial');
    for (const bad of [{ sourceAppId: 'has space' }, { sourceAppName: 'n'.repeat(41) }, { sourceScene: 'gift' }, { requestId: 'r'.repeat(129) }]) {
      assert.is((await points(source(bad))).code, -1, JSON.stringify(bad));
    }
    assert.is(state.user(ALICE)!.points, 10);
    assert.is((await points(source())).code, 0);
  }));

test('points: with source fields, a deduction below zero and a reused requestId are refused', () =>
  withSimulator(async ({ points, state }) => {
    const short = await points({ point: -11, ...source({ requestId: 'r1' }) });
    assert.is(short.code, -1);
    assert.is(state.user(ALICE)!.points, 10);
    assert.is((await points({ point: -10, ...source({ requestId: 'r1' }) })).code, 0, 'a refused request does not use up its requestId');
    const again = await points({ point: 5, ...source({ requestId: 'r1' }) });
    assert.equal(again, { code: -1, msg: '请求编号已使用' });
    assert.is(state.user(ALICE)!.points, 0);
  }));

test('points: without source fields, a deduction may take the balance negative', () =>
  withSimulator(async ({ points, state }) => {
    assert.is((await points({ point: -25 })).code, 0);
    assert.is(state.user(ALICE)!.points, -15);
  }));

test('points: an unknown user is refused', () =>
  withSimulator(async ({ points }) => {
    assert.is((await points({ userName: 'nobody' })).code, -1);
  }));

// ---- medals and items ----

test('medals: removing an absent medal succeeds; an unknown user is an HTTP 500', () =>
  withSimulator(async ({ url, post }) => {
    assert.equal(await post('/user/edit/remove-metal', { goldFingerKey: SIMULATOR_KEY, userName: 'alice', name: 'never' }), {
      code: 0,
      msg: '勋章移除成功。',
    });
    const response = await fetch(`${url}/user/edit/give-metal`, {
      method: 'POST',
      headers: { 'User-Agent': 'test', 'Content-Type': 'application/json' },
      body: JSON.stringify({ goldFingerKey: SIMULATOR_KEY, userName: 'nobody', name: 'M', description: 'd', attr: '', data: '' }),
    });
    assert.is(response.status, 500);
  }));

test('medals: an expireDate must be yyyy-MM-dd', () =>
  withSimulator(async ({ post, state }) => {
    const medal = { goldFingerKey: SIMULATOR_KEY, userName: 'alice', name: 'M', description: 'd', attr: '', data: '' };
    assert.is((await post('/user/edit/give-metal', { ...medal, expireDate: '2030/01/01' })).code, -1);
    assert.is((await post('/user/edit/give-metal', { ...medal, expireDate: '2030-01-01' })).code, 0);
    assert.is(state.user(ALICE)!.medals[0]!.expireDate, '2030-01-01');
  }));

test('items: the sum must be an integer', () =>
  withSimulator(async ({ post }) => {
    assert.is((await post('/user/edit/items', { goldFingerKey: SIMULATOR_KEY, userName: 'alice', item: 'nameCard', sum: 0.5 })).code, -1);
  }));

// ---- OpenID provider ----

test('login: checkid_setup parameters and return_to are checked', () =>
  withSimulator(async ({ url }) => {
    const refused = [
      { 'openid.mode': undefined },
      { 'openid.ns': 'http://openid.net/signon/1.1' },
      { 'openid.identity': 'https://someone.example' },
      { 'openid.return_to': 'http://game.example/cb', 'openid.realm': 'http://game.example' },
      { 'openid.return_to': 'https://evil.example/cb', 'openid.realm': 'https://game.example' },
      { 'openid.return_to': 'not a url', 'openid.realm': 'not' },
      { 'openid.realm': undefined },
    ];
    for (const overrides of refused) {
      const response = await browse(loginUrl(url, overrides));
      assert.is(response.status, 400, JSON.stringify(overrides));
      assert.match(await response.text(), 'OpenID error');
    }
    const accepted = [
      { 'openid.return_to': 'https://game.example/cb', 'openid.realm': 'https://game.example' },
      { 'openid.return_to': 'http://127.0.0.1:8090/cb', 'openid.realm': 'http://127.0.0.1:8090' },
    ];
    for (const overrides of accepted) assert.is((await browse(loginUrl(url, overrides))).status, 200, JSON.stringify(overrides));
  }));

test('login: the consent page offers each user; confirming redirects with a signed assertion', () =>
  withSimulator(async ({ url }) => {
    const page = await (await browse(loginUrl(url))).text();
    assert.match(page, `value="${ALICE}"`);
    assert.match(page, 'Bob &lt;script&gt;');
    assert.match(page, 'action="/openid/login/confirm"');

    const confirmed = await browse(`${url}/openid/login/confirm`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ return_to: 'http://localhost:8090/fishpi/callback?state=s1', realm: 'http://localhost:8090', oId: BOB }),
    });
    const params = await redirectParams(confirmed);
    assert.is(params.state, 's1');
    assert.is(params['openid.mode'], 'id_res');
    assert.is(params['openid.op_endpoint'], `${url}/openid`);
    assert.is(params['openid.identity'], `${url}/openid/id/${BOB}`);
    assert.is(params['openid.claimed_id'], params['openid.identity']);
    assert.is(params['openid.return_to'], 'http://localhost:8090/fishpi/callback?state=s1');
    assert.match(params['openid.response_nonce']!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z[0-9a-f]+$/);
    assert.match(await verify(url, params), /^ns:http:\/\/specs\.openid\.net\/auth\/2\.0\nis_valid:true\nscope:profile\.read\n$/);
  }));

test('login: cancelling redirects to return_to with error=cancelled', () =>
  withSimulator(async ({ url }) => {
    const cancelled = await browse(`${url}/openid/login/confirm`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ return_to: 'http://localhost:8090/cb?state=s1', realm: 'http://localhost:8090', cancel: '1' }),
    });
    assert.equal(await redirectParams(cancelled), { state: 's1', error: 'cancelled' });
  }));

test('verify: the mode must be check_authentication and the signature must match the fields openid.signed names', () =>
  withSimulator(async ({ url }) => {
    const params = await redirectParams(await browse(loginUrl(url, { sim_user: ALICE })));
    const asked = (changed: Record<string, string>) =>
      fetch(`${url}/openid/verify`, {
        method: 'POST',
        headers: { 'User-Agent': 'test', 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...params, 'openid.mode': 'check_authentication', ...changed }),
      }).then((r) => r.text());
    assert.match(await asked({ 'openid.mode': 'id_res' }), 'is_valid:false');
    assert.match(await asked({ 'openid.signed': 'op_endpoint,claimed_id,identity' }), 'is_valid:false');
    assert.match(await asked({ 'openid.return_to': 'http://localhost:8090/elsewhere' }), 'is_valid:false');
    assert.match(await verify(url, params), 'is_valid:true', 'the refused attempts did not use up the nonce');
  }));

test('verify: an assertion older than five minutes is invalid', async () => {
  let clock = Date.now();
  await withSimulator(
    async ({ url }) => {
      const params = await redirectParams(await browse(loginUrl(url, { sim_user: ALICE })));
      clock += FIVE_MINUTES + 1000;
      assert.match(await verify(url, params), 'is_valid:false');
    },
    { now: () => clock },
  );
});

test('publicUrl names the provider endpoint and the identities', () =>
  withSimulator(
    async ({ url }) => {
      const params = await redirectParams(await browse(loginUrl(url, { sim_user: ALICE })));
      assert.is(params['openid.op_endpoint'], 'https://fishpi.example/openid');
      assert.is(params['openid.identity'], `https://fishpi.example/openid/id/${ALICE}`);
      assert.match(await verify(url, params), 'is_valid:true');
    },
    { publicUrl: 'https://fishpi.example/' },
  ));

test('sim_user naming nobody redirects with an error', () =>
  withSimulator(async ({ url }) => {
    assert.equal(await redirectParams(await browse(loginUrl(url, { sim_user: '42' }))), { state: 's1', error: 'unknown_user' });
  }));

test.run();
