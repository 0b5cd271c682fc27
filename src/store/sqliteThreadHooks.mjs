// Preloaded (--import) into the SQLite adapter's worker threads when they run from the TypeScript
// sources (tsx: development and tests), never from dist/. On Node 20, tsx registers its hooks in
// the main thread only and a worker does not inherit them, so the worker registers them itself
// before its TypeScript entry module loads. Plain JavaScript because nothing can load TypeScript
// before it has run; sqliteThreads.ts starts the workers with it.
import { register } from 'tsx/esm/api';

register();
