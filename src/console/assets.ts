// The console's front-end files. The compiled service serves the ones `npm run build` wrote next
// to it. Run from its sources (`npm start`, the tests), it bundles them itself, once, at the first
// request for one of them. With live reload on as well (`npm run dev`), it watches src/console/ui:
// each change drops the bundle (the next request makes a new one) and is announced to the open
// console pages, which reload themselves (changes.ts). No request ever costs more than one bundle
// per change of the sources.
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildContext } from 'esbuild';
import type { Logger } from '../log.js';
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
  /** With live reload: calls back whenever a front-end file changes, until the returned stop. */
  watchChanges?(onChange: () => void): () => void;
  close(): Promise<void>;
}

const APP_SCRIPT = '/console/assets/console.js';
const RELOAD_SCRIPT_PATH = '/console/assets/reload.js';
/** Reloads the page when the service says a front-end file changed. */
const RELOAD_SCRIPT = `new EventSource('/console/assets/changes').addEventListener('change', () => location.reload());\n`;

const FROM_SOURCES = import.meta.url.endsWith('.ts');

const typeOf = (file: string) => (Object.hasOwn(ASSET_TYPES, file) ? ASSET_TYPES[file]! : undefined);

/** `liveReload` applies to the sources only: the compiled service has none to watch. */
export function consoleAssets(options: { liveReload: boolean; log: Logger }): ConsoleAssets {
  return FROM_SOURCES ? bundledFromSources(options) : builtFiles();
}

function builtFiles(): ConsoleAssets {
  const cache = new Map<string, Buffer>();
  return {
    scripts: [APP_SCRIPT],
    async get(file) {
      const type = typeOf(file);
      if (!type) return undefined;
      let body = cache.get(file);
      if (!body) {
        body = await readFile(new URL(`./assets/${file}`, import.meta.url));
        cache.set(file, body);
      }
      return { type, body };
    },
    async close() {},
  };
}

function bundledFromSources({ liveReload, log }: { liveReload: boolean; log: Logger }): ConsoleAssets {
  let context: Promise<BuildContext> | undefined;
  /** The current bundle (or its failure, kept until the sources change), file name → text. */
  let bundle: Promise<Map<string, string>> | undefined;
  const onChanges = new Set<() => void>();
  const bundleNow = async () => {
    // esbuild is a development dependency: loaded only where the sources run.
    context ??= import('esbuild').then((esbuild) => esbuild.context({ ...bundleOptions(), write: false, outdir: '/console-assets' }));
    const { outputFiles = [] } = await (await context).rebuild();
    log.info({ files: outputFiles.map((f) => basename(f.path)) }, 'bundled the console front-end');
    return new Map(outputFiles.map((f) => [basename(f.path), f.text]));
  };
  const watcher = liveReload
    ? watch(fileURLToPath(new URL('./ui/', import.meta.url)), { recursive: true }, () => {
        bundle = undefined;
        for (const onChange of onChanges) onChange();
      })
    : undefined;
  return {
    scripts: liveReload ? [APP_SCRIPT, RELOAD_SCRIPT_PATH] : [APP_SCRIPT],
    async get(file) {
      if (liveReload && file === basename(RELOAD_SCRIPT_PATH)) return { type: 'text/javascript; charset=utf-8', body: RELOAD_SCRIPT };
      const type = typeOf(file);
      if (!type) return undefined;
      bundle ??= bundleNow();
      const body = (await bundle).get(file);
      return body === undefined ? undefined : { type, body };
    },
    ...(liveReload && {
      watchChanges(onChange: () => void) {
        onChanges.add(onChange);
        return () => onChanges.delete(onChange);
      },
    }),
    async close() {
      watcher?.close();
      onChanges.clear();
      await (await context)?.dispose();
    },
  };
}
