import type { HttpDeps } from '../http/deps.js';
import type { ConsoleCookies } from './cookies.js';
import type { ConsoleSessions } from './sessions.js';
import type { ConsoleSignIn } from './signIn.js';

/** What the console's pages and endpoints use, built once by createConsole. */
export interface ConsoleDeps extends Pick<HttpDeps, 'store' | 'runner' | 'readModels' | 'outcomes' | 'metrics' | 'clock'> {
  cookies: ConsoleCookies;
  sessions: ConsoleSessions;
  signIn: ConsoleSignIn;
  /** CONSOLE_ADMINS. */
  admins: ReadonlySet<string>;
  publicUrl: () => string;
}
