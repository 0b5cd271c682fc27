// Where events came from, at the CLI: `events --json` prints each event's metadata (null for an
// event without any), the human form names the request, the app and key or the operator, the node
// and the cause; `audit` entries name the request; and what the CLI itself appends names the OS
// user who ran it as the operator.
import { execFile } from 'node:child_process';
import { userInfo } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, type Harness, withHarness } from '../support/harness.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const NODE = 'node-cli-meta';

function cli(h: Harness, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, DATA_DIR: h.dataDir, LOG_LEVEL: 'silent', EVENTSTORE_CONNECTION_STRING: '' }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ndjson = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { position: number; stream: string; type: string; metadata: Record<string, unknown> | null });

/** A points edit made with `X-Request-Id: trace-cli`, by a key of game-one. */
async function traced(run: (h: Harness, keyId: string) => Promise<void>) {
  await withHarness({ NODE_ID: NODE }, async (h) => {
    const { key, id } = await h.key(['points:edit'], 'game-one');
    const res = await h.request('POST', '/adm/points/edit', { body: { oId: ALICE.oId, point: 3, memo: 'traced' }, apiKey: key, headers: { 'X-Request-Id': 'trace-cli' } });
    assert.is(res.status, 200, res.text);
    await run(h, id);
  });
}

test('events --json prints metadata: the request, app, key and node; the outcome names its intent; null where an event has none', () =>
  traced(async (h, keyId) => {
    const run = await cli(h, 'events', '--json');
    assert.is(run.code, 0, run.stderr);
    const lines = ndjson(run.stdout);
    const intent = lines.find((e) => e.type === 'PointsEditRequested')!;
    const outcome = lines.find((e) => e.type === 'OperationApplied')!;
    assert.equal(intent.metadata, { requestId: 'trace-cli', nodeId: NODE, appId: 'game-one', keyId });
    assert.equal(outcome.metadata, { requestId: 'trace-cli', nodeId: NODE, appId: 'game-one', keyId, causationId: intent.position });
    // Issued by the test itself, outside any request or node.
    assert.is(lines.find((e) => e.type === 'ApiKeyIssued')!.metadata, null);
  }));

test('events (human form) names the request, the app and key, the node and the cause before the data', () =>
  traced(async (h, keyId) => {
    const run = await cli(h, 'events');
    assert.is(run.code, 0, run.stderr);
    const rows = run.stdout.trimEnd().split('\n');
    const intent = rows.find((row) => row.includes('  PointsEditRequested  '))!;
    assert.ok(intent.includes(`  PointsEditRequested  request=trace-cli app=game-one key=${keyId} node=${NODE}  {`), intent);
    const position = /^#(\d+)/.exec(intent)![1];
    const outcome = rows.find((row) => row.includes('  OperationApplied  '))!;
    assert.ok(outcome.includes(`request=trace-cli app=game-one key=${keyId} node=${NODE} cause=#${position}  {`), outcome);
    assert.match(rows.find((row) => row.includes('  ApiKeyIssued  '))!, / {2}ApiKeyIssued {2}\{/);
  }));

test('audit points --json: the entry names its request', () =>
  traced(async (h) => {
    const run = await cli(h, 'audit', 'points', ALICE.oId, '--json');
    assert.is(run.code, 0, run.stderr);
    assert.equal(
      (JSON.parse(run.stdout) as Array<{ requestId?: string; appId: string }>).map((e) => [e.requestId, e.appId]),
      [['trace-cli', 'game-one']],
    );
  }));

test('what the CLI appends names the OS user as the operator, and no request or node', () =>
  traced(async (h, keyId) => {
    const disabled = await cli(h, 'keys', 'disable', keyId);
    assert.is(disabled.code, 0, disabled.stderr);
    const events = ndjson((await cli(h, 'events', '--stream', `apikey-${keyId}`, '--json')).stdout);
    assert.equal(
      events.map((e) => [e.type, e.metadata]),
      [
        ['ApiKeyIssued', null],
        ['ApiKeyDisabled', { operator: userInfo().username }],
      ],
    );
  }));

test.run();
