// The service as `npm run dev` runs the console (live reload on), as a process of its own: its
// configuration from the environment, like src/main.ts. For tests that start it in a child
// process (under a small open-files limit, say).
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/main.js';
import { withLiveReloadOn } from './operatorSignIn.js';

await startService(withLiveReloadOn(loadConfig()));
