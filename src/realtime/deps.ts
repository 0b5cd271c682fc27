import type { Logger } from '../log.js';
import type { ConnectionAdmission } from './admission.js';
import type { BrowserCookies } from './browserCookies.js';
import type { Clients } from './clients.js';
import type { RealtimeHub } from './hub.js';
import type { SessionCookies, Sessions } from './sessions.js';
import type { SignIn } from './signIn.js';

/** What the realtime and sign-in routes use, built by the composition root. */
export interface RealtimeDeps {
  hub: RealtimeHub;
  clients: Clients;
  sessions: Sessions;
  cookies: SessionCookies;
  /** The client and login binding cookies (sign-in bound to the browser). */
  browserCookies: BrowserCookies;
  signIn: SignIn;
  /** Path segment of the login page: `/<communityName>/login`. */
  communityName: string;
  /** Origins allowed to open the stream and log out with credentials (CORS_ORIGINS). */
  corsOrigins: readonly string[];
  log: Logger;
  /** Per-address and per-node caps on open streams. */
  admission: ConnectionAdmission;
  /** PUBLIC_URL, or the service's own URL once it listens. */
  publicUrl: () => string;
}
