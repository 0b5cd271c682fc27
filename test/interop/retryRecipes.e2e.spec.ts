// docs/api.md's retry recipes, the shell one and the Python one, read from the page and run as
// written behind a reverse proxy that answers one request with its own HTML 502 page (what nginx
// says when it cannot reach a node): each sends the write again with the same Idempotency-Key and
// it is applied once. Against a platform that applies and never answers, each stops at
// `outcome_unknown` after one request, names the operation and says to hand it to an operator.
// Debian's own python3 runs the Python one (its standard library only: no `requests` there).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, startHarness, type Harness } from '../support/harness.js';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy.js';

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const MEMO = 'daily reward';

function recipe(language: 'sh' | 'python'): string {
  const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const start = text.indexOf('\n## Retrying\n');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1];
  assert.ok(block, `a ${language} recipe in "Retrying"`);
  assert.not.match(block!, /\b(jq|uuidgen|requests)\b/, 'nothing a stock Debian lacks');
  assert.match(block!, ALICE.oId, 'the recipe writes to the user the test knows');
  return block!;
}

interface World {
  h: Harness;
  proxy: FaultProxy;
  key: string;
  dir: string;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) =>
    execFile(file, args, { env: { PATH: process.env.PATH!, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    ),
  );
}

const test = suite<World>('the retry recipes of docs/api.md behind a proxy');

test.before(async (world) => {
  world.h = await startHarness({ env: { COMMUNITY_TIMEOUT_MS: '1000' } });
  world.proxy = await startFaultProxy();
  world.proxy.target = world.h.url;
  world.key = (await world.h.key(['*'])).key;
  world.dir = await mkdtemp(join(tmpdir(), 'community-bridge-recipes-'));
  await writeFile(join(world.dir, 'points.sh'), recipe('sh'), { mode: 0o755 });
  await writeFile(join(world.dir, 'points.py'), recipe('python'));
});

test.after(async (world) => {
  await world.proxy?.close();
  await world.h?.close();
  if (world.dir) await rm(world.dir, { recursive: true, force: true });
});

const RECIPES: Array<[string, (world: World) => Promise<Run>]> = [
  ['the shell recipe', (world) => run('/bin/sh', [join(world.dir, 'points.sh')], { URL: world.proxy.url, KEY: world.key })],
  ['the Python recipe', (world) => run(PYTHON, [join(world.dir, 'points.py')], { URL: world.proxy.url, KEY: world.key })],
];

for (const [name, runRecipe] of RECIPES) {
  test(`${name}: the proxy's HTML 502 is sent again with the same key, and the points move once`, async (world) => {
    const applied = world.h.sim.pointsApplied(MEMO);
    const sent = world.proxy.calls('/adm/points/edit');
    world.proxy.failNext('/adm/points/edit', { kind: 'badGateway' });
    const result = await runRecipe(world);
    assert.is(result.code, 0, `${name}:\n${result.stdout}${result.stderr}`);
    assert.is(world.proxy.calls('/adm/points/edit') - sent, 2, 'the 502, then the write');
    assert.is(world.h.sim.pointsApplied(MEMO) - applied, 1, 'applied once');
  });

  test(`${name}: an unknown outcome stops it after one request, naming the operation and what to do`, async (world) => {
    const sent = world.proxy.calls('/adm/points/edit');
    world.h.sim.faultNext('/user/edit/points', { kind: 'applyThenHang' });
    const result = await runRecipe(world);
    assert.is.not(result.code, 0, `${name} does not report success:\n${result.stdout}`);
    const operationId = /give operation ([a-z0-9]{15}) to an operator/.exec(result.stderr)?.[1];
    assert.ok(operationId, `${name} names the operation: ${result.stderr}`);
    assert.match(result.stderr, /do not send it again/);
    assert.is(world.proxy.calls('/adm/points/edit') - sent, 1, 'sent once, never again');
    const listed = await world.h.get(`/adm/audit/points/${ALICE.oId}`, world.key);
    assert.match(listed.text, operationId!, 'the operation it names is the one recorded');
  });
}

test.run();
