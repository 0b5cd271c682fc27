// The service as it is deployed (docs/production.md: compiled by tsc, run by plain node), built
// once per bench run: run from the sources the service also pays for the loader's output (tsx
// keeps function names by a defineProperty on every closure it makes, several per request on
// the hot paths), which no deployment runs. The build goes to .bench-tmp/build-*/dist beside a
// copy of package.json, an install's layout: the compiled service reads its version from
// ../package.json and finds node_modules up the tree.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT_DIR } from './proc.js';

/**
 * Compiles src/ with tsconfig.build.json into a directory of this run's own under .bench-tmp
 * (two runs at once do not overwrite each other's build); resolves with the compiled service's
 * directory and a function that removes the build.
 */
export async function buildService(): Promise<{ dist: string; remove(): void }> {
  mkdirSync(join(ROOT_DIR, '.bench-tmp'), { recursive: true });
  const build = mkdtempSync(join(ROOT_DIR, '.bench-tmp', 'build-'));
  const remove = () => rmSync(build, { recursive: true, force: true });
  const dist = join(build, 'dist');
  copyFileSync(join(ROOT_DIR, 'package.json'), join(build, 'package.json'));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', dist], { cwd: ROOT_DIR, stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) {
    remove();
    throw new Error(`tsc -p tsconfig.build.json exited with ${code}`);
  }
  return { dist, remove };
}

/**
 * The URL to import one of the service's modules from (`core.js`, `system/workContext.js`): the
 * compiled one when the bench built the service (BENCH_SERVICE_BUILD, set by bench/run.ts for its
 * children), else the source, which tsx loads.
 */
export function serviceModule(path: string): string {
  const build = process.env.BENCH_SERVICE_BUILD;
  return new URL(path, build ? pathToFileURL(`${build}/`) : new URL('../../src/', import.meta.url)).href;
}
