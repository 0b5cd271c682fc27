// The Node.js version the project asks for is one every dependency accepts: the lowest version
// `engines.node` allows satisfies the `engines.node` of each package in the lock file (dev
// dependencies too, since `npm install` warns about them alike), and the README names it.
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const manifest = JSON.parse(read('package.json')) as { engines: { node: string } };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } | string[] }> };

const lowest = semver.minVersion(manifest.engines.node)!.version;

test('every package in the lock file runs on the lowest Node.js version engines allows', () => {
  let checked = 0;
  for (const [path, entry] of Object.entries(lock.packages)) {
    const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!path || !wanted) continue;
    assert.ok(semver.satisfies(lowest, wanted), `${path} wants Node ${wanted}; package.json's engines allow ${lowest}`);
    checked++;
  }
  assert.ok(checked > 20, `packages with an engines field: ${checked}`);
});

test('the README asks for the same version', () => {
  assert.match(read('README.md'), `Node.js ${lowest} or newer`);
});

test.run();
