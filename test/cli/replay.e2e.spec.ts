// Replay (README, "API keys (operator CLI)"): `events`, `audit points|vip` and `projections rebuild`, run as
// the operator runs them — a child process on the service's data directory.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/store/sqlite.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';

const ROOT = new URL('../..', import.meta.url).pathname;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(dataDir: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      // An empty EVENTSTORE_CONNECTION_STRING counts as unset: the CLI uses the embedded store.
      { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EVENTSTORE_CONNECTION_STRING: '' }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ndjson = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

/** A history with every kind of entry: points edits, a medal, VIP grants and a renewal. */
async function seeded(run: (h: Harness, key: string) => Promise<void>) {
  const h = await startHarness();
  try {
    const { key } = await h.key(['*'], 'Game One');
    for (const [point, memo] of [
      [10, 'daily reward'],
      [-2, 'shop'],
      [5, '签到奖励'],
    ] as const) {
      assert.is((await h.post('/adm/points/edit', { oId: ALICE.oId, point, memo }, key)).status, 200);
    }
    const medal = { oId: ALICE.oId, name: 'Early', description: 'early bird', attr: 'url=https://example.test/m.png&backcolor=ffffff&fontcolor=000000' };
    assert.is((await h.post('/adm/medal/give', medal, key)).status, 200);
    assert.is((await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2027-01-01 00:00:00' }, key)).status, 200);
    assert.is((await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'vip', expired: '2028-01-01 00:00:00' }, key)).status, 200);
    assert.is((await h.post('/adm/vip/submit', { oId: ALICE.oId, quality: 'svip', expired: '2027-03-01 00:00:00' }, key)).status, 200);
    await run(h, key);
  } finally {
    await h.close();
  }
}

test('events --json prints the whole log as NDJSON, oldest first, with position, stream, revision, type, data, metadata, created', () =>
  seeded(async (h) => {
    const [run, human] = await Promise.all([cli(h.dataDir, 'events', '--json'), cli(h.dataDir, 'events')]);
    assert.is(run.code, 0, run.stderr);
    const lines = ndjson(run.stdout);
    const log = await h.events();
    assert.is(lines.length, log.length);
    assert.equal(
      lines.map((e) => e.position),
      log.map((e) => e.position),
    );
    assert.ok(
      lines.every((e, i) => i === 0 || e.position > lines[i - 1].position),
      'oldest first',
    );
    for (const [i, line] of lines.entries()) {
      assert.equal(Object.keys(line), ['position', 'stream', 'revision', 'type', 'data', 'metadata', 'created']);
      assert.equal(line.data, log[i]!.data);
      assert.is(line.stream, log[i]!.streamName);
      assert.is(line.revision, log[i]!.revision);
      assert.match(line.created, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    assert.ok(lines.some((e) => e.type === 'PointsEditRequested' && e.data.request.memo === '签到奖励'));

    // Human form: one readable line per event.
    assert.is(human.code, 0, human.stderr);
    const rows = human.stdout.trimEnd().split('\n');
    assert.is(rows.length, log.length);
    assert.match(rows[0]!, /^#1 {2}\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z {2}apikey-\w+@0 {2}ApiKeyIssued {2}\{/);
  }));

test('events --stream: one stream by name, or a whole category', () =>
  seeded(async (h) => {
    const log = await h.events();
    const operation = log.find((e) => e.type === 'PointsEditRequested')!.streamName;
    const [one, vip, none] = await Promise.all([
      cli(h.dataDir, 'events', '--stream', operation, '--json'),
      cli(h.dataDir, 'events', '--stream', 'vip', '--json'),
      cli(h.dataDir, 'events', '--stream', 'user-nobody'),
    ]);
    assert.is(one.code, 0, one.stderr);
    assert.equal(
      ndjson(one.stdout).map((e) => [e.stream, e.revision, e.type]),
      [
        [operation, 0, 'PointsEditRequested'],
        [operation, 1, 'OperationApplied'],
      ],
    );
    assert.equal(
      ndjson(vip.stdout).map((e) => e.type),
      ['VipGranted', 'VipRenewed', 'VipGranted'],
    );
    assert.ok(ndjson(vip.stdout).every((e) => e.stream.startsWith('vip-')));
    assert.is(none.code, 0);
    assert.is(none.stdout, 'No events in user-nobody.\n');
  }));

test('audit points|vip --json print the entries the audit endpoints answer; the human form is a table', () =>
  seeded(async (h, key) => {
    const [pointsJson, vipJson, points, vip, nobody, missing] = await Promise.all([
      cli(h.dataDir, 'audit', 'points', ALICE.oId, '--json'),
      cli(h.dataDir, 'audit', 'vip', ALICE.oId, '--json'),
      cli(h.dataDir, 'audit', 'points', ALICE.oId),
      cli(h.dataDir, 'audit', 'vip', ALICE.oId),
      cli(h.dataDir, 'audit', 'vip', '42'),
      cli(h.dataDir, 'audit', 'points'),
    ]);
    for (const [kind, run] of [
      ['points', pointsJson],
      ['vip', vipJson],
    ] as const) {
      const answer = await h.get(`/adm/audit/${kind}/${ALICE.oId}`, key);
      assert.is(answer.status, 200, answer.text);
      assert.is(run.code, 0, run.stderr);
      assert.is(run.stdout.trimEnd().split('\n').length, 1, 'exactly one JSON document');
      assert.equal(JSON.parse(run.stdout), answer.body.data.items, kind);
    }
    const rows = points.stdout.trimEnd().split('\n');
    assert.match(rows[0]!, /^TIME\s+APP\s+KEY\s+POINT\s+MEMO\s+OUTCOME\s+DETAIL$/);
    assert.is(rows.length, 4);
    assert.match(rows[3]!, /game-one .* \+5 +签到奖励 +applied +积分变更成功/);
    assert.match(vip.stdout, /renewed\s+vip\s+2028-01-01 00:00:00\.000Z\s+2027-01-01 00:00:00\.000Z/);
    assert.is(nobody.stdout, 'No VIP grants or renewals recorded for oId 42.\n');
    assert.is(missing.code, 1);
    assert.match(missing.stderr, /the oId is required/);
  }));

test('projections rebuild replays the log through every read model and prints events/s; answers are identical across a restart', () =>
  seeded(async (h, key) => {
    const paths = [`/adm/audit/points/${ALICE.oId}`, `/adm/audit/vip/${ALICE.oId}`, `/adm/audit/points/${ALICE.oId}?limit=2`, `/adm/vip/${ALICE.oId}`];
    const answers = async () => Promise.all(paths.map(async (path) => (await h.get(path, key)).text));
    const before = await answers();
    const count = (await h.events()).length;

    const [run, json] = await Promise.all([cli(h.dataDir, 'projections', 'rebuild'), cli(h.dataDir, 'projections', 'rebuild', '--json')]);
    assert.is(run.code, 0, run.stderr);
    const figure = /^Rebuilt (\d+) read models from (\d+) events in (\d+\.\d{2}) s \((\d+) events\/s\)/.exec(run.stdout);
    assert.ok(figure, run.stdout);
    assert.is(Number(figure[2]), count);
    assert.ok(Number(figure[1]) >= 8, 'every read model');
    assert.ok(Number(figure[4]) > 0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what a progress bar would write
    assert.not.match(run.stderr, /\x1b/, 'no progress bar when stderr is not a terminal');

    const report = JSON.parse(json.stdout);
    assert.is(report.events, count);
    assert.ok(report.readModels.includes('vip') && report.readModels.includes('operations'));

    assert.equal(await answers(), before, 'answers before the restart');
    await h.restart();
    assert.equal(await answers(), before, 'answers after the restart');
  }));

test('projections rebuild names the read model and the event when the log no longer folds', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-replay-'));
  try {
    const store = new SqliteEventStore({ file: join(dataDir, 'events.sqlite') });
    await store.append('vip-u1', [{ type: 'VipGranted', data: null }]);
    await store.close();
    const run = await cli(dataDir, 'projections', 'rebuild');
    assert.is(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /^Store: SQLite file .*events\.sqlite\nRead model "[\w-]+" failed on event #1 \(VipGranted in vip-u1@0\): /);
    assert.is(run.stdout, '');
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
