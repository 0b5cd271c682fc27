// `npm run build`: the console's front-end into dist/console/assets, next to the compiled service.
import { build } from 'esbuild';
import { bundleOptions } from './bundle.js';

await build({ ...bundleOptions(), outdir: new URL('../../dist/console/assets/', import.meta.url).pathname });
