// README "API keys (operator CLI)": the operator CLI, run as a child process exactly as an
// operator would, on the store a service uses. `--json` prints exactly one JSON document; the
// clear key is shown once and only its hash is stored; a key the CLI changes takes effect on a
// running service as soon as the service has applied the CLI's event from the shared log (how
// soon that is, is no test's business: timings belong in bench/).
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { cli, type CliRun } from '../support/serviceProcess.js';

/** What `keys create --json` prints. */
type CreatedKey = { id: string; key: string; appId: string; app: string; permissions: string[]; expires: string | null; allApps: boolean };
/** An entry of `keys list --json`, as far as these tests read it. */
type ListedKey = { id: string; app: string; appId: string; status: string; created: string };

/** The one JSON document the command printed, as the shape the caller expects of that command. */
function json<T>(run: CliRun): T {
  assert.is(run.code, 0, `exit ${run.code}: ${run.stderr}`);
  const lines = run.stdout.split('\n').filter((l) => l.trim());
  assert.is(lines.length, 1, `exactly one JSON document on stdout:\n${run.stdout}`);
  return JSON.parse(lines[0]!) as T;
}

async function storeBytes(dataDir: string): Promise<Buffer> {
  const files = await readdir(dataDir);
  return Buffer.concat(await Promise.all(files.map((f) => readFile(join(dataDir, f)))));
}

// ---------------------------------------------------------------------------------------------
const offline = suite<{ dir: string }>('keys CLI on a store no service runs on');

offline.before(async (context) => {
  context.dir = await mkdtemp(join(tmpdir(), 'community-bridge-cli-'));
});
offline.after(async ({ dir }) => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

offline('keys create --json prints exactly one document {id,key,appId,app,permissions,expires,allApps}; only the hash is stored', async ({ dir }) => {
  const created = json<CreatedKey>(await cli(dir, 'keys', 'create', '--app-id', 'game-one', '--app', 'Game One', '--permissions', 'points:edit,vip:read', '--json'));
  assert.equal(Object.keys(created), ['id', 'key', 'appId', 'app', 'permissions', 'expires', 'allApps']);
  assert.match(created.id, /^[a-z0-9]{15}$/);
  assert.match(created.key, /^cbk_[A-Za-z0-9_-]{27,}$/);
  assert.is(created.appId, 'game-one');
  assert.is(created.app, 'Game One');
  assert.equal(created.permissions, ['points:edit', 'vip:read']);
  assert.is(created.expires, null);

  // The clear key is not in the store (database, WAL or shared memory file), only its SHA-256 hash.
  const bytes = await storeBytes(dir);
  assert.ok(bytes.length > 0);
  assert.not.ok(bytes.includes(created.key), 'the clear key is stored');
  assert.not.ok(bytes.includes(created.key.slice(4)), 'the key without its prefix is stored');
  assert.ok(bytes.includes(createHash('sha256').update(created.key).digest('hex')), 'the hash is stored');
});

offline('--expires takes "YYYY-MM-DD HH:MM:SS" (UTC) and answers it in the spec timestamp form', async ({ dir }) => {
  const created = json<CreatedKey>(await cli(dir, 'keys', 'create', '--app-id', 'expiring', '--permissions', '*', '--expires', '2099-02-03 04:05:06', '--json'));
  assert.is(created.expires, '2099-02-03 04:05:06.000Z');
});

offline('human output: create shows the key once with a warning; list is a table', async ({ dir }) => {
  const created = await cli(dir, 'keys', 'create', '--app-id', 'human', '--app', 'Human', '--permissions', 'message:push');
  assert.is(created.code, 0, created.stderr);
  const key = /\b(cbk_\S+)/.exec(created.stdout)?.[1];
  assert.ok(key, created.stdout);
  assert.match(created.stdout, /only time the key is shown/);
  assert.match(created.stdout, /app id human/);
  const list = await cli(dir, 'keys', 'list');
  assert.is(list.code, 0, list.stderr);
  assert.match(list.stdout, /^ID\s+APP\s+APP ID\s+REACH\s+STATUS\s+EXPIRES\s+PERMISSIONS/);
  assert.match(list.stdout, /Human\s+human\s+own app\s+enabled\s+never\s+message:push/);
  assert.not.match(list.stdout, /cbk_/);
});

offline('an unknown permission exits non-zero with a message naming it, and creates nothing', async ({ dir }) => {
  const run = await cli(dir, 'keys', 'create', '--app-id', 'bad', '--permissions', 'points:edit,points:steal', '--json');
  assert.is.not(run.code, 0);
  assert.match(run.stderr, /points:steal/);
  assert.is(run.stdout, '');
});

offline('a bad --expires exits non-zero: impossible, wrong shape or in the past', async ({ dir }) => {
  const expiries = ['2025-02-30 00:00:00', '2099-01-01', 'tomorrow', '2000-01-01 00:00:00'];
  const runs = await Promise.all(expiries.map((expires) => cli(dir, 'keys', 'create', '--app-id', 'bad', '--permissions', '*', '--expires', expires)));
  for (const [i, run] of runs.entries()) {
    const expires = expiries[i];
    assert.is.not(run.code, 0, expires);
    assert.match(run.stderr, /--expires/, expires);
    assert.is(run.stdout, '', expires);
  }
});

offline('missing --app or --permissions exits non-zero naming the option', async ({ dir }) => {
  const [noApp, noPermissions] = await Promise.all([cli(dir, 'keys', 'create', '--permissions', '*'), cli(dir, 'keys', 'create', '--app-id', 'x')]);
  assert.is.not(noApp.code, 0);
  assert.match(noApp.stderr, /--app/);
  assert.is.not(noPermissions.code, 0);
  assert.match(noPermissions.stderr, /--permissions/);
});

offline('an unknown action or command exits non-zero with usage', async ({ dir }) => {
  const [action, command] = await Promise.all([cli(dir, 'keys', 'rotate'), cli(dir, 'frobnicate')]);
  assert.is.not(action.code, 0);
  assert.match(action.stderr, /rotate/);
  assert.is.not(command.code, 0);
  assert.match(command.stderr, /Usage/);
});

offline('keys list --json lists every key created, none refused, without secrets', async ({ dir }) => {
  const keys = json<ListedKey[]>(await cli(dir, 'keys', 'list', '--json'));
  assert.ok(Array.isArray(keys));
  assert.equal(
    keys.map((k) => k.app),
    ['Game One', 'expiring', 'Human'],
  );
  for (const k of keys) {
    assert.equal(Object.keys(k).sort(), ['allApps', 'app', 'appId', 'created', 'expires', 'id', 'permissions', 'status']);
    assert.is(k.status, 'enabled');
    assert.match(k.created, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  }
  assert.not.match(JSON.stringify(keys), /cbk_/);
});

offline.run();

// ---------------------------------------------------------------------------------------------
const live = suite<{ h: Harness }>('keys CLI on the store of a running service');

live.before(async (context) => {
  context.h = await startHarness();
});
live.after(async ({ h }) => {
  await h?.close();
});

const vipStatus = async (h: Harness, key: string) => (await h.get(`/adm/vip/${ALICE.oId}`, key)).status;

live('a key created by the CLI works on the running service, with no restart, once it has applied the CLI event', async ({ h }) => {
  const created = json<CreatedKey>(await cli(h.dataDir, 'keys', 'create', '--app-id', 'game-one', '--app', 'Game One', '--permissions', 'points:edit,vip:read', '--json'));
  await h.caughtUp();
  assert.is(await vipStatus(h, created.key), 200);
});

live('a key disabled by the CLI stops working on the running service as soon as it has applied the change; enable brings it back, revoke ends it', async ({ h }) => {
  const created = json<CreatedKey>(await cli(h.dataDir, 'keys', 'create', '--app-id', 'live', '--permissions', 'vip:read', '--json'));
  await h.caughtUp();
  assert.is(await vipStatus(h, created.key), 200);

  assert.is(json<{ status: string }>(await cli(h.dataDir, 'keys', 'disable', created.id, '--json')).status, 'disabled');
  await h.caughtUp();
  assert.is(await vipStatus(h, created.key), 401, 'a disabled key is refused');
  const again = await cli(h.dataDir, 'keys', 'disable', created.id);
  assert.is(again.code, 0, 'disabling twice is not an error');
  assert.match(again.stdout, new RegExp(`Key ${created.id} \\(live\\) is disabled`));

  assert.is(json<{ status: string }>(await cli(h.dataDir, 'keys', 'enable', created.id, '--json')).status, 'enabled');
  await h.caughtUp();
  assert.is(await vipStatus(h, created.key), 200, 'an enabled key is accepted again');

  assert.is(json<{ status: string }>(await cli(h.dataDir, 'keys', 'revoke', created.id, '--json')).status, 'revoked');
  await h.caughtUp();
  assert.is(await vipStatus(h, created.key), 401, 'a revoked key is refused');

  const [enable, unknown] = await Promise.all([cli(h.dataDir, 'keys', 'enable', created.id), cli(h.dataDir, 'keys', 'disable', 'nosuchkey000000')]);
  assert.is.not(enable.code, 0, 'a revoked key cannot be enabled');
  assert.match(enable.stderr, /revoked/);
  assert.is.not(unknown.code, 0);
  assert.match(unknown.stderr, /nosuchkey000000/);
  assert.is((await h.get(`/adm/vip/${ALICE.oId}`, created.key)).status, 401);

  // Disabling twice recorded nothing the second time.
  assert.equal(
    (await h.events(`apikey-${created.id}`)).map((e) => e.type),
    ['ApiKeyIssued', 'ApiKeyDisabled', 'ApiKeyEnabled', 'ApiKeyRevoked'],
  );
});

live('keys the service issued are listed by the CLI', async ({ h }) => {
  const issued = await h.key(['liveness:read'], 'From Service');
  const listed = json<ListedKey[]>(await cli(h.dataDir, 'keys', 'list', '--json'));
  assert.ok(
    listed.some((k) => k.id === issued.id && k.appId === 'from-service'),
    JSON.stringify(listed),
  );
});

live.run();
