import type { HttpDeps } from '../http/deps.js';
import type { ApiKeyService } from '../services/apiKeys.js';
import type { ConsoleIndex } from './consoleIndex.js';
import type { EventFollows } from './follow.js';
import type { ConsoleCookies } from './cookies.js';
import type { ConsoleSessions } from './sessions.js';
import type { ConsoleSignIn } from './signIn.js';
import type { ConsoleStreams } from './streams.js';

/** What the console's pages and endpoints use, built once by createConsole. */
export interface ConsoleDeps
  extends Pick<HttpDeps, 'store' | 'runner' | 'readModels' | 'outcomes' | 'metrics' | 'clock' | 'pushLimits' | 'api' | 'liveness' | 'webhooks' | 'presence' | 'clockReading'> {
  cookies: ConsoleCookies;
  sessions: ConsoleSessions;
  signIn: ConsoleSignIn;
  /** CONSOLE_ADMINS. */
  admins: ReadonlySet<string>;
  publicUrl: () => string;
  nodeId: string;
  keys: ApiKeyService;
  /** What the console keeps beside the read models (folded by the service's runner). */
  index: ConsoleIndex;
  /** Live streams of the event log. */
  follows: EventFollows;
  /** Every stream the console holds open: capped, and ended with its session. */
  streams: ConsoleStreams;
}
