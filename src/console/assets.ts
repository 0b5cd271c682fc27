// The console's front-end files. The compiled service serves the ones `npm run build` wrote next
// to it; run from its sources (`npm start`, `npm run dev`, the tests), it bundles them itself at
// request time, so an edit shows at the next reload with no build step.
import { readFile } from 'node:fs/promises';
import type { BuildContext } from 'esbuild';
import { ASSET_TYPES, bundleOptions } from './bundle.js';

export interface Asset {
  type: string;
  body: Buffer | string;
}

export interface ConsoleAssets {
  /** One of the console's files by name, or undefined. */
  get(file: string): Promise<Asset | undefined>;
  close(): Promise<void>;
}

const FROM_SOURCES = import.meta.url.endsWith('.ts');

export function consoleAssets(): ConsoleAssets {
  return FROM_SOURCES ? bundledOnRequest() : builtFiles();
}

function builtFiles(): ConsoleAssets {
  const cache = new Map<string, Buffer>();
  return {
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
    async get(file) {
      const type = Object.hasOwn(ASSET_TYPES, file) ? ASSET_TYPES[file]! : undefined;
      if (!type) return undefined;
      // esbuild is a development dependency: loaded only where the sources run.
      context ??= import('esbuild').then((esbuild) => esbuild.context({ ...bundleOptions(), write: false, outdir: '/console-assets' }));
      const { outputFiles = [] } = await (await context).rebuild();
      const output = outputFiles.find((f) => f.path.endsWith(`/${file}`));
      return output && { type, body: output.text };
    },
    async close() {
      await (await context)?.dispose();
    },
  };
}
