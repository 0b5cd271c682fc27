// How the console's front-end (src/console/ui) becomes its two files, console.js and console.css:
// one esbuild bundle, used by `npm run build` (into dist/console/assets) and, when the service runs
// from its sources, by assets.ts (in memory).
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

export const ASSET_TYPES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

export const bundleOptions = (): BuildOptions => ({
  entryPoints: { console: fileURLToPath(new URL('./ui/main.tsx', import.meta.url)) },
  bundle: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'none',
  logLevel: 'silent',
});
