// The SDK as an integrator gets it: `npm pack` of the workspace package, installed from the
// tarball into a fresh project with no registry, imported by a plain Node ESM script that makes
// calls against a real service. The tarball is the name the READMEs tell people to install.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, withHarness } from '../support/harness.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const { version: SDK_VERSION } = JSON.parse(await readFile(join(ROOT, 'packages/sdk/package.json'), 'utf8')) as { version: string };
/** npm pack and an offline install take seconds; this bounds a hung one. */
const NPM_TIMEOUT_MS = 120_000;
const PROBE_TIMEOUT_MS = 30_000;
/** What a child may print before it is cut off. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string>; timeoutMs: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: options.timeoutMs, maxBuffer: MAX_OUTPUT_BYTES }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
}

const PROBE = `
import { AuthError, BridgeError, createAdminClient } from '@community-bridge/sdk';

const admin = createAdminClient({ baseUrl: process.env.BRIDGE_URL, apiKey: process.env.BRIDGE_API_KEY });
const edited = await admin.points.edit({ oId: process.env.OID, point: 3, memo: 'sdk: from the tarball' });
const refused = await createAdminClient({ baseUrl: process.env.BRIDGE_URL, apiKey: 'cbk_' + '0'.repeat(27) })
  .vip.get(process.env.OID)
  .catch((error) => error);
console.log(JSON.stringify({
  code: edited.code,
  auth: refused instanceof AuthError && refused instanceof BridgeError,
  status: refused.status,
  requestId: typeof refused.requestId,
}));
`;

test('npm pack → npm install <tgz> offline → a plain ESM script calls the service', () =>
  withHarness({}, async (h) => {
    const dir = await mkdtemp(join(tmpdir(), 'community-bridge-sdk-pack-'));
    try {
      const packed = JSON.parse(await run('npm', ['pack', '--json', '--workspace', 'packages/sdk', '--pack-destination', dir], { cwd: ROOT, timeoutMs: NPM_TIMEOUT_MS })) as Array<{
        filename: string;
        version: string;
        files: Array<{ path: string }>;
      }>;
      const [tarball] = packed;
      assert.ok(tarball, 'npm pack named a tarball');
      assert.is(tarball.version, SDK_VERSION);
      assert.is(tarball.filename, `community-bridge-sdk-${SDK_VERSION}.tgz`);
      const files = tarball.files.map((f) => f.path);
      for (const file of ['dist/index.js', 'dist/index.d.ts', 'README.md', 'CHANGELOG.md']) assert.ok(files.includes(file), `${file} is in the tarball`);
      assert.not.ok(
        files.some((f) => f.startsWith('src/')),
        'sources stay out',
      );

      for (const readme of ['README.md', 'packages/sdk/README.md']) {
        assert.ok((await readFile(join(ROOT, readme), 'utf8')).includes(`dist/${tarball.filename}`), `${readme} documents installing ${tarball.filename}`);
      }

      const project = join(dir, 'integrator');
      await mkdir(project);
      await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
      // No registry: the tarball has no dependencies, so nothing else may be fetched.
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--cache', join(dir, 'npm-cache'), join(dir, tarball.filename)], {
        cwd: project,
        timeoutMs: NPM_TIMEOUT_MS,
      });
      const installed = JSON.parse(await readFile(join(project, 'node_modules/@community-bridge/sdk/package.json'), 'utf8')) as { version: string };
      assert.is(installed.version, SDK_VERSION);

      await writeFile(join(project, 'probe.mjs'), PROBE);
      const { key } = await h.key(['*']);
      const out = await run(process.execPath, ['probe.mjs'], { cwd: project, env: { BRIDGE_URL: h.url, BRIDGE_API_KEY: key, OID: ALICE.oId }, timeoutMs: PROBE_TIMEOUT_MS });
      assert.equal(JSON.parse(out), { code: 0, auth: true, status: 401, requestId: 'string' });
      assert.is(h.sim.pointsApplied('sdk: from the tarball'), 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }));

test.run();
