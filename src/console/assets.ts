// The console's front-end files. The compiled service serves the ones `npm run build` wrote next
// to it; run from its sources (`npm start`, `npm run dev`, the tests), it bundles them itself at
// request time and the page reloads itself when a front-end file changes, with no build step.
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { BuildContext } from 'esbuild';
import { ASSET_TYPES, bundleOptions } from './bundle.js';

export interface Asset {
  type: string;
  body: Buffer | string;
}

export interface ConsoleAssets {
  /** The scripts the console's page loads. */
  scripts: string[];
  /** One of the console's files by name, or undefined. */
  get(file: string): Promise<Asset | undefined>;
  /** Run from the sources: calls back whenever a front-end file changes, until the returned stop. */
  watchChanges?(onChange: () => void): () => void;
  close(): Promise<void>;
}

const APP_SCRIPT = '/console/assets/console.js';
/** Reloads the page when the service says a front-end file changed. */
const RELOAD_SCRIPT = `new EventSource('/console/assets/changes').addEventListener('change', () => location.reload());\n`;

const FROM_SOURCES = import.meta.url.endsWith('.ts');

export function consoleAssets(): ConsoleAssets {
  return FROM_SOURCES ? bundledOnRequest() : builtFiles();
}

function builtFiles(): ConsoleAssets {
  const cache = new Map<string, Buffer>();
  return {
    scripts: [APP_SCRIPT],
    async get(file) {
      const type = Object.hasOwn(ASSET_TYPES, file) ? ASSET_TYPES[file]! : undefined;
      if (!type) return undefined;
      let body = cache.get(file);
      if (!body) cache.set(file, (body = await readFile(new URL(`./assets/${file}`, import.meta.url))));
      return { type, body };
    },
    async close() {},
  };
}

function bundledOnRequest(): ConsoleAssets {
  let context: Promise<BuildContext> | undefined;
  return {
    scripts: [APP_SCRIPT, '/console/assets/reload.js'],
    async get(file) {
      if (file === 'reload.js') return { type: 'text/javascript; charset=utf-8', body: RELOAD_SCRIPT };
      const type = Object.hasOwn(ASSET_TYPES, file) ? ASSET_TYPES[file]! : undefined;
      if (!type) return undefined;
      // esbuild is a development dependency: loaded only where the sources run.
      context ??= import('esbuild').then((esbuild) => esbuild.context({ ...bundleOptions(), write: false, outdir: '/console-assets' }));
      const { outputFiles = [] } = await (await context).rebuild();
      const output = outputFiles.find((f) => f.path.endsWith(`/${file}`));
      return output && { type, body: output.text };
    },
    watchChanges(onChange) {
      const watcher = watch(fileURLToPath(new URL('./ui/', import.meta.url)), { recursive: true }, onChange);
      return () => watcher.close();
    },
    async close() {
      await (await context)?.dispose();
    },
  };
}
