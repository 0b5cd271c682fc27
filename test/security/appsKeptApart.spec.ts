// Apps are kept apart. An app is named by an exact id, never by folding a name, so two names do
// not silently become one app; a key reads the audit of, and resolves the operations of, its own
// app only, unless it was created for every app; and a resolution says who made it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness } from '../support/harness.js';
import { cli, cliJson } from '../support/serviceProcess.js';

/** What `keys create --json` prints, as far as this suite reads it. */
type IssuedKey = { key: string; appId: string; app: string; allApps: boolean };

test('an app id is exact: a name that is not an id is refused, and one that suggests an existing app names it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-apps-'));
  try {
    const created = cliJson<IssuedKey>(await cli(dir, 'keys', 'create', '--app-id', 'game-a', '--app', 'Game A', '--permissions', '*', '--json'));
    assert.equal([created.appId, created.app, created.allApps], ['game-a', 'Game A', false]);

    const folded = await cli(dir, 'keys', 'create', '--app', 'game a', '--permissions', '*');
    assert.is(folded.code, 1);
    assert.match(folded.stderr, /--app: "game a" is not an app id, and the id it suggests, game-a, is the existing app "Game A"/);
    const unnamed = await cli(dir, 'keys', 'create', '--app', 'Game B', '--permissions', '*');
    assert.is(unnamed.code, 1);
    assert.match(unnamed.stderr, /--app: "Game B" is not an app id .*give the app an id of its own with --app-id, e.g. game-b/);
    const renamed = await cli(dir, 'keys', 'create', '--app-id', 'game-a', '--app', 'Another Name', '--permissions', '*');
    assert.is(renamed.code, 1);
    assert.match(renamed.stderr, /app game-a exists already, named "Game A"/);

    const second = cliJson<IssuedKey>(await cli(dir, 'keys', 'create', '--app-id', 'game-a', '--permissions', 'audit:read', '--json'));
    assert.equal([second.appId, second.app], ['game-a', 'Game A'], 'a second key of the app, named by its id');
    const auditor = cliJson<IssuedKey>(await cli(dir, 'keys', 'create', '--app-id', 'audit-desk', '--permissions', 'audit:read', '--all-apps', '--json'));
    assert.is(auditor.allApps, true);
    const listed = cliJson<Array<{ appId: string; allApps: boolean }>>(await cli(dir, 'keys', 'list', '--json'));
    assert.equal(
      listed.map((k) => [k.appId, k.allApps]),
      [
        ['game-a', false],
        ['game-a', false],
        ['audit-desk', true],
      ],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a key reads its own app's audit only; an all-apps key reads every app's", async () => {
  const h = await startHarness();
  try {
    const a = await h.key(['*'], 'game-a');
    const b = await h.key(['*'], 'game-b');
    const auditor = await h.key(['audit:read'], 'audit-desk', { allApps: true });
    assert.is((await h.post('/adm/points/edit', { oId: ALICE.oId, point: 1, memo: 'secret memo of game a' }, a.key)).status, 200);
    assert.is((await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' }, a.key)).status, 200);
    const memos = async (key: string) => (await h.get(`/adm/audit/points/${ALICE.oId}`, key)).body.data.items.map((e: { request: { memo: string } }) => e.request.memo);
    const vips = async (key: string) => (await h.get(`/adm/audit/vip/${ALICE.oId}`, key)).body.data.items.length;
    assert.equal(await memos(b.key), [], "game b sees none of game a's points edits");
    assert.is(await vips(b.key), 0, 'nor its VIP grants');
    assert.equal(await memos(a.key), ['secret memo of game a']);
    assert.equal(await memos(auditor.key), ['secret memo of game a']);
    assert.is(await vips(auditor.key), 1);
  } finally {
    await h.close();
  }
});

test("a key cannot resolve another app's operation (404); an all-apps key can, and the answer names it", async () => {
  const h = await startHarness();
  try {
    const a = await h.key(['*'], 'game-a');
    const b = await h.key(['*'], 'game-b');
    const ops = await h.key(['operations:resolve'], 'ops-desk', { allApps: true });
    h.sim.faultNext('/user/edit/points', { kind: 'applyThenHang' });
    const body = { oId: ALICE.oId, point: 5, memo: 'unknown of game a' };
    const unknown = await h.request('POST', '/adm/points/edit', { body, apiKey: a.key, headers: { 'Idempotency-Key': 'a-1' } });
    assert.is(unknown.status, 504, unknown.text);
    const operationId = unknown.body.data.operationId as string;

    const foreign = await h.post(`/adm/operations/${operationId}/resolve`, { applied: false, note: 'not mine' }, b.key);
    assert.is(foreign.status, 404, foreign.text);
    const still = await h.request('POST', '/adm/points/edit', { body, apiKey: a.key, headers: { 'Idempotency-Key': 'a-1' } });
    assert.equal([still.status, still.body.data?.status], [504, 'unknown'], 'still unknown');

    const resolved = await h.post(`/adm/operations/${operationId}/resolve`, { applied: true, note: 'in the ledger' }, ops.key);
    assert.is(resolved.status, 200, resolved.text);
    const retry = await h.request('POST', '/adm/points/edit', { body, apiKey: a.key, headers: { 'Idempotency-Key': 'a-1' } });
    assert.is(retry.status, 200, retry.text);
    assert.is(retry.body.msg, `Applied (resolved by app ops-desk (key ${ops.id}, all apps): in the ledger)`);

    // The same Idempotency-Key from another app is another key.
    const other = await h.request('POST', '/adm/points/edit', { body, apiKey: b.key, headers: { 'Idempotency-Key': 'a-1' } });
    assert.is(other.status, 200, other.text);
    assert.is(other.headers.get('idempotent-replayed'), null);
  } finally {
    await h.close();
  }
});

test.run();
