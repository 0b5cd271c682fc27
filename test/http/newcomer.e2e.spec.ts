// What a newcomer meets first: the start-up lines, `GET /`, a missing platform key said as a
// setting to fix (503, nothing recorded), the CLI naming its store, and answers that report
// delivery and the platform's transaction id.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, withHarness } from '../support/harness.js';

const root = new URL('../..', import.meta.url).pathname;

test('GET / names the service, its version and where to go: a page for people, JSON for programs', () =>
  withHarness({}, async (h) => {
    const page = await h.request('GET', '/', { headers: { accept: 'text/html' } });
    assert.is(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /community-bridge <small>\d+\.\d+\.\d+<\/small>/);
    assert.match(page.text, /href="\/docs"/);
    assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    const json = await h.request('GET', '/', { headers: { accept: 'application/json' } });
    assert.equal(json.body, { service: 'community-bridge', version: json.body.version, links: { docs: '/docs', openapi: '/openapi.json', health: '/healthz', ready: '/readyz' } });
  }));

test('without COMMUNITY_KEY, operations that need it answer 503 naming the setting and record nothing; /readyz says so', () =>
  withHarness({ COMMUNITY_KEY: '' }, async (h) => {
    const { key } = await h.key();
    const before = (await h.events()).length;
    for (const [path, body] of [
      ['/adm/points/edit', { oId: ALICE.oId, point: 1, memo: 'm' }],
      ['/adm/items/query', { oId: ALICE.oId }],
    ] as const) {
      const res = await h.post(path, body, key);
      assert.is(res.status, 503, res.text);
      assert.equal(res.body, { code: 503, message: res.body.message, data: { reason: 'not_configured' } });
      assert.match(res.body.message, /^COMMUNITY_KEY \(or COMMUNITY_KEY_(POINT|ITEM)\), the community platform's gold-finger key for (points edits|items), is not set/);
    }
    const liveness = await h.get(`/adm/liveness/${ALICE.oId}`, key);
    assert.is(liveness.status, 503);
    assert.is((await h.events()).length, before, 'no user sync, no operation recorded');
    assert.is(h.sim.calls('/api/user/getInfoById'), 0, 'not even a lookup');
    const vip = await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, key);
    assert.is(vip.status, 200, 'what needs no platform key still works');
    const operator = await h.key(['audit:read'], 'ops', { allApps: true });
    const ready = await h.get('/readyz', operator.key);
    assert.is(ready.status, 200);
    assert.is(
      ready.body.warnings[0],
      'COMMUNITY_KEY is not set: points edits, medals, items, liveness answer 503; set COMMUNITY_KEY, or COMMUNITY_KEY_POINT/COMMUNITY_KEY_MEDAL/COMMUNITY_KEY_ITEM/COMMUNITY_KEY_LIVENESS',
    );
    const documented = (await h.get('/openapi.json')).body.paths;
    for (const [path, method] of [
      ['/adm/points/edit', 'post'],
      ['/adm/items/query', 'post'],
      ['/adm/liveness/{oId}', 'get'],
    ] as const) {
      assert.match(documented[path][method].responses['503'].description, /COMMUNITY_KEY/, `${path} documents the 503`);
    }
  }));

test('a push reports which given ids were online, offline or unknown, from presence on any node', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key();
    // Alice is signed in on an open stream; Bob is known (synced) but not connected.
    const alice = await connect(h);
    await signIn(h, alice.clientId, ALICE.oId);
    await alice.stream.next('login');
    assert.is((await h.get(`/adm/vip/${BOB.oId}`, key)).status, 200);
    const aliceUser = h.service.deps.readModels.users.byOid(ALICE.oId)!;
    const res = await h.post('/adm/message/push', { oIds: [ALICE.oId, BOB.oId, '42'], userIds: [aliceUser.id, 'nobody000000000'], name: 'n', data: {} }, key);
    assert.equal(res.body, { code: 0, msg: 'success', data: { online: [ALICE.oId, aliceUser.id], offline: [BOB.oId], unknown: ['42', 'nobody000000000'] } });
    alice.stream.close();
  }));

test('the CLI names the store it used and takes --data-dir', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-newcomer-'));
  try {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', 'keys', 'list', '--json', '--data-dir', dir],
        { cwd: root, env: { ...process.env, DATA_DIR: '/nonexistent/elsewhere' } },
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    assert.is(run.code, 0, run.stderr);
    assert.is(run.stderr, `Store: SQLite file ${join(dir, 'events.sqlite')}\n`);
    assert.equal(JSON.parse(run.stdout), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/**
 * `npm start` (src/main.ts) on a fresh data directory with `env`, until its standard error
 * matches every one of `until`; gives what it printed. The process and the directory are gone after.
 */
async function startupMessages(env: Record<string, string>, until: RegExp[]): Promise<{ err: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-newcomer-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dir, PORT: '0', COMMUNITY_KEY: '', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${err}`);
        return until.every((pattern) => pattern.test(err));
      },
      { what: () => `the start-up messages ${until.join(', ')}:\n${err}`, timeoutMs: 20_000, everyMs: 50 },
    );
    return { err, dir };
  } finally {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

test('npm start says what to do next: the address, /docs, the keys create command for its DATA_DIR, and the missing key', async () => {
  const { err, dir } = await startupMessages({}, [/Warning:/]);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+) \(store: SQLite file /.exec(err)?.[1];
  assert.ok(url, err);
  assert.match(err, new RegExp(`API reference and "Try it out": +${url}/docs`));
  assert.match(err, new RegExp(`Create an API key: +DATA_DIR=${dir} npm run --silent cli -- keys create --app-id <your-game> --app "<Your Game>" --permissions '\\*'`));
  assert.match(err, /npm run dev/);
  assert.match(err, /Warning: COMMUNITY_KEY is not set: .*; set COMMUNITY_KEY, or COMMUNITY_KEY_POINT\/COMMUNITY_KEY_MEDAL\/COMMUNITY_KEY_ITEM\/COMMUNITY_KEY_LIVENESS\./);
});

test('npm start with the deprecated COMMUNITY_KEY_METAL uses it for medals and says so in one warning line', async () => {
  // Both warnings are in: the start-up has said all it says.
  const { err } = await startupMessages({ COMMUNITY_KEY_METAL: 'medal-key' }, [/COMMUNITY_KEY_METAL is deprecated/, /Warning: COMMUNITY_KEY is not set/]);
  assert.is(err.match(/Warning: COMMUNITY_KEY_METAL is deprecated: rename it COMMUNITY_KEY_MEDAL\.\n/g)?.length, 1, err);
  // The medal key is set: the missing-key warning leaves it out.
  assert.match(err, /Warning: COMMUNITY_KEY is not set, nor COMMUNITY_KEY_POINT\/COMMUNITY_KEY_ITEM\/COMMUNITY_KEY_LIVENESS: /);
});

test.run();
