// docs/production.md, "Upgrading": an event in an older shape, written raw into the SQLite file as
// an older version wrote it, is read in the current shape by the service (catch-up and live), by
// its read models and by the CLI, and the service acts on it.
import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../src/store/port.js';
import { createSchema } from '../../src/store/sqliteSchema.js';
import { eventually } from '../support/eventually.js';
import { startHarness } from '../support/harness.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const NODE = 'bridge-1';
const AT = '2026-11-20T08:00:00.000Z';
const EXPIRES = '2099-01-01T00:00:00.000Z';

/** An Idempotency-Key claim as versions before named claims wrote it: no `claim`, no `epoch`. */
const oldClaim = (node: string, at: string) => ({ appId: 'game-one', requestHash: 'a'.repeat(64), at, expires: EXPIRES, node });
const keyStream = (n: number) => `idempotency-game-one-${String(n).repeat(64)}`;

/** Appends one row with plain SQL, as another process of an older version would have. */
function writeRaw(file: string, stream: string, data: object): void {
  const db = new Database(file);
  try {
    createSchema(db);
    db.prepare('INSERT INTO events (stream, revision, type, data, metadata, created) VALUES (?, 0, ?, ?, NULL, ?)').run(
      stream,
      'IdempotentRequestStarted',
      JSON.stringify(data),
      AT,
    );
  } finally {
    db.close();
  }
}

function cliEvents(dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'events', '--stream', 'idempotency', '--json'],
      { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EVENTSTORE_CONNECTION_STRING: '' } },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('an Idempotency-Key claim in its older shape is read with its claim and epoch, at start, live and by the CLI; its node releases it', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-upgrade-'));
  const file = join(dataDir, 'events.sqlite');
  writeRaw(file, keyStream(1), oldClaim(NODE, AT));
  const h = await startHarness({ env: { DATA_DIR: dataDir, NODE_ID: NODE } });
  try {
    // Catch-up: the store hands the event over in the current shape.
    const [started] = await h.events(keyStream(1));
    assert.equal(started!.data, { ...oldClaim(NODE, AT), claim: `${NODE}@${AT}`, epoch: `${NODE}@${AT}` });

    // The node that held the claim has restarted: it frees it, naming the claim by that name.
    const released = await eventually(async () => (await h.events(keyStream(1))).find((e) => e.type === 'IdempotentRequestReleased'), 'the orphaned claim released');
    assert.is(released.revision, 1);

    // Live: a row committed by another connection reaches the subscription and the read model upgraded.
    const live: RecordedEvent[] = [];
    const subscription = h.service.deps.store.subscribeToAll({ after: await h.service.deps.store.headPosition(), onEvent: (event) => live.push(event) });
    try {
      writeRaw(file, keyStream(2), oldClaim('bridge-2', AT));
      const seen = await eventually(() => live.find((e) => e.streamName === keyStream(2)), 'the live event');
      assert.equal(seen.data, { ...oldClaim('bridge-2', AT), claim: `bridge-2@${AT}`, epoch: `bridge-2@${AT}` });
      const model = await eventually(() => h.service.deps.readModels.idempotency.get(keyStream(2)), 'the read model to apply it');
      assert.is(model.state.kind, 'started');
      assert.is(model.state.kind === 'started' && model.state.claim, `bridge-2@${AT}`);
    } finally {
      await subscription.unsubscribe();
    }

    // The CLI, another process on the same file, prints the current shape too.
    const run = await cliEvents(dataDir);
    assert.is(run.code, 0, run.stderr);
    const lines = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { stream: string; type: string; data: Record<string, unknown> });
    const claims = lines.filter((line) => line.type === 'IdempotentRequestStarted');
    assert.equal(
      claims.map((line) => [line.stream, line.data.claim, line.data.epoch]),
      [
        [keyStream(1), `${NODE}@${AT}`, `${NODE}@${AT}`],
        [keyStream(2), `bridge-2@${AT}`, `bridge-2@${AT}`],
      ],
    );

    // The log itself is never rewritten: the rows keep the shape they were written in.
    const db = new Database(file, { readonly: true });
    try {
      const rows = db.prepare<[], { data: string }>("SELECT data FROM events WHERE type = 'IdempotentRequestStarted' ORDER BY position").all();
      assert.equal(
        rows.map((row) => JSON.parse(row.data)),
        [oldClaim(NODE, AT), oldClaim('bridge-2', AT)],
      );
    } finally {
      db.close();
    }
  } finally {
    await h.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
