// Read-model snapshots across real restarts of the service on a real SQLite file: a restart from
// the snapshot its clean stop wrote builds the same read models as a replay of the whole log; a
// snapshot that is damaged, of an older read-model version, of another log or past the log's end
// is not used (or, for a version, only that read model is rebuilt), and each such start says so.
import { cp, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotFile } from '../../src/core.js';
import { SavedMap, jsonCodec, type SavedMapState } from '../../src/projections/columns.js';
import { readSnapshotFile, writeSnapshotFile } from '../../src/projections/snapshotFile.js';
import type { Clock } from '../../src/system/clock.js';
import type { VipState } from '../../src/domain/vip.js';
import { capturedLog } from '../support/capturedLog.js';
import { ALICE, startHarness, type HarnessOptions } from '../support/harness.js';
import { readModelStates } from '../support/readModelStates.js';
import { assertSameAsFullReplay, snapshotLine, traffic, TRAFFIC_USERS, visitorDeletedAfterSnapshot } from '../support/snapshots.js';

/**
 * Time stands still: read models that judge age against the clock (replay windows, sweeps, the
 * console's per-minute counts) then build the same state at every start, and the test compares
 * states whole.
 */
const frozen: Clock = { now: () => '2026-06-01T12:00:00.000Z' };

/** The console on, so that its index is part of what is compared. */
const ENV = { CONSOLE_ADMINS: ALICE.oId, NODE_ID: 'node-a' };

async function start(options: HarnessOptions = {}) {
  const captured = capturedLog('info');
  const h = await startHarness({
    clock: frozen,
    log: captured.log,
    env: ENV,
    users: TRAFFIC_USERS,
    ...options,
  });
  return { h, captured };
}

/** Rewrites the service's snapshot (stopped) as `change` says, under a checksum that matches. */
async function rewriteSnapshot(dataDir: string, change: (content: NonNullable<Awaited<ReturnType<typeof readSnapshotFile>>>) => void): Promise<void> {
  const file = snapshotFile(dataDir);
  const content = (await readSnapshotFile(file))!;
  change(content);
  content.header.models = content.header.models.map((model, i) => ({ ...model, bytes: content.states[i]!.length }));
  await writeSnapshotFile(file, content.header, content.states);
}

test('a restart from the snapshot its clean stop wrote builds the read models a replay of the whole log builds', async () => {
  const { h, captured } = await start();
  try {
    await traffic(h);
    const before = readModelStates(h.service.deps.runner);
    await h.restart();
    const line = snapshotLine(captured);
    assert.is(line.level, 30);
    assert.match(String(line.msg), /read models restored from a snapshot at position \d+$/);
    assert.equal(line.rebuilt, []);
    assert.is(line.position, h.service.deps.runner.position);
    // The snapshot holds session ids and key hashes: only the service's user may read it.
    assert.is((await stat(snapshotFile(h.dataDir))).mode & 0o777, 0o600);
    assert.is((await stat(join(h.dataDir, 'snapshots'))).mode & 0o777, 0o700);
    // What the stop left is what the start has: and a replay of the log agrees with both.
    assert.equal(readModelStates(h.service.deps.runner), before);
    const replayed = await assertSameAsFullReplay(h);
    assert.ok(Object.keys(replayed).includes('console'), "the console's index is compared too");
  } finally {
    await h.close();
  }
});

test('only a read model whose version changed is rebuilt from the log; the others start from the snapshot', async () => {
  const { h, captured } = await start();
  try {
    await traffic(h);
    await h.service.close();
    const marker = { id: 'fromthesnapshot', userId: 'nosuchuser00000', quality: 'vip' as const, expired: '2099-01-01T00:00:00.000Z', created: frozen.now(), updated: frozen.now() };
    let usersVersion = 0;
    await rewriteSnapshot(h.dataDir, ({ header, states }) => {
      const index = (name: string) => header.models.findIndex((model) => model.name === name);
      // The users read model as an older version saved it: empty, and marked so.
      usersVersion = --header.models[index('users')]!.version;
      states[index('users')] = serialize({ byOId: new SavedMap(jsonCodec).snapshotState(), oIdById: new SavedMap(jsonCodec).snapshotState() });
      // A VIP record the log never had: a read model restored from the snapshot shows it, a replayed one could not.
      const vip = new SavedMap<{ state: VipState; revision: number }>(jsonCodec, deserialize(states[index('vip')]!) as SavedMapState);
      vip.set('nosuchuser00000', { state: { vip: marker }, revision: 0 });
      states[index('vip')] = serialize(vip.snapshotState());
    });

    await h.restart();
    const line = snapshotLine(captured);
    assert.equal(line.rebuilt, [{ name: 'users', why: `version ${usersVersion} in the snapshot, ${usersVersion + 1} now` }]);
    assert.ok((line.restored as string[]).includes('vip'));
    assert.equal(h.service.deps.readModels.vip.records('nosuchuser00000'), [marker], 'vip was restored from the snapshot');
    assert.is(h.service.deps.readModels.users.byOid(ALICE.oId)?.name, ALICE.userName, 'users was rebuilt from the log');
    const rebuiltUsers = readModelStates(h.service.deps.runner).users;
    await h.restart({ READ_MODEL_SNAPSHOTS: 'false' });
    assert.equal(rebuiltUsers, readModelStates(h.service.deps.runner).users, 'users rebuilt from the log as a whole replay builds it');
  } finally {
    await h.close();
  }
});

test('a damaged snapshot is not used: one warning, and the read models are rebuilt from the log', async () => {
  const { h, captured } = await start();
  try {
    await traffic(h);
    await h.service.close();
    const file = snapshotFile(h.dataDir);
    const bytes = await readFile(file);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x40;
    await writeFile(file, bytes);
    const warningsBefore = captured.lines().filter((line) => line.level === 40).length;
    await h.restart();
    const warnings = captured
      .lines()
      .filter((line) => line.level === 40)
      .slice(warningsBefore);
    assert.is(warnings.length, 1, JSON.stringify(warnings));
    assert.match(
      String(warnings[0]!.msg),
      /read-model snapshot not used: the snapshot .* is damaged: its checksum does not match its content; the read models were rebuilt from the whole log/,
    );
    await assertSameAsFullReplay(h);
  } finally {
    await h.close();
  }
});

test('a snapshot of another log is not used, though that log is longer', async () => {
  const first = await start();
  const second = await start();
  try {
    await traffic(first.h);
    await first.h.service.close();
    await traffic(second.h);
    await traffic(second.h, 2);
    assert.ok(second.h.service.deps.runner.position > first.h.service.deps.runner.position);
    await second.h.service.close();
    await cp(snapshotFile(first.h.dataDir), snapshotFile(second.h.dataDir));
    await second.h.restart();
    const line = snapshotLine(second.captured);
    assert.is(line.level, 40);
    assert.match(String(line.msg), /read-model snapshot not used: the log has not got the event the snapshot was taken (after|at) \(.*\): it is another log/);
    await assertSameAsFullReplay(second.h);
  } finally {
    await first.h.close();
    await second.h.close();
  }
});

test('a snapshot past the end of the log (the log restored to an earlier point) is not used', async () => {
  const first = await start();
  const earlier = await mkdtemp(join(tmpdir(), 'community-bridge-test-'));
  try {
    await traffic(first.h);
    await first.h.service.close();
    // The log as a backup holds it now, before a second round of traffic.
    await cp(join(first.h.dataDir, 'events.sqlite'), join(earlier, 'events.sqlite'));
    await first.h.restart();
    await traffic(first.h, 2);
    await first.h.service.close();
    await cp(join(first.h.dataDir, 'snapshots'), join(earlier, 'snapshots'), { recursive: true });
    const restored = await start({ dataDir: earlier });
    try {
      const line = snapshotLine(restored.captured);
      assert.is(line.level, 40);
      assert.match(
        String(line.msg),
        /read-model snapshot not used: the snapshot stands for position \d+ and the log ends at \d+: it is another log, or this one restored to an earlier point/,
      );
      await assertSameAsFullReplay(restored.h);
    } finally {
      await restored.h.close();
    }
  } finally {
    await first.h.close();
  }
});

test('streams retention deletes after a snapshot was taken: a restart from that snapshot ends where a replay of the shortened log does', async () => {
  // The clock stands still, so an anonymous client that has left is due for deletion at once.
  const { h, captured } = await start({ env: { ...ENV, ANONYMOUS_RETENTION_MS: '0' } });
  try {
    await traffic(h);
    const { snapshot, clientId } = await visitorDeletedAfterSnapshot(h);
    await writeFile(snapshotFile(h.dataDir), snapshot);
    await h.restart();
    assert.match(String(snapshotLine(captured).msg), /^read models restored from a snapshot/);
    assert.is(h.service.deps.readModels.clients.get(clientId), undefined, 'the visitor is not connected forever');
    await assertSameAsFullReplay(h);
  } finally {
    await h.close();
  }
});

test.run();
