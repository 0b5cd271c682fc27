// The operator console (/console), built for the composition root when CONSOLE_ADMINS is set:
// its sessions, sign-in and routes over the service's own parts.
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import type { HttpDeps } from '../http/deps.js';
import type { Logger } from '../log.js';
import { OpenIdAttempts } from '../realtime/openIdAttempts.js';
import { loadSessionSecret } from '../realtime/sessions.js';
import { ConsoleCookies } from './cookies.js';
import type { ConsoleDeps } from './deps.js';
import { consoleRouter } from './routes.js';
import { ConsoleSessions } from './sessions.js';
import { ConsoleSignIn } from './signIn.js';

export interface Console {
  /** Every /console route. */
  routes: Middleware;
  /** Ends what the console holds open (live streams), before the server waits for requests. */
  close(): Promise<void>;
}

export type ConsoleSettings = NonNullable<Config['console']>;

export function createConsole(settings: ConsoleSettings, config: Config, http: HttpDeps, log: Logger): Console {
  const { store, runner, readModels, outcomes, metrics, clock, platform, userSync } = http;
  const publicUrl = http.realtime.publicUrl;
  const admins = new Set(settings.admins);
  const sessions = new ConsoleSessions({ store, clock, ttlMs: settings.sessionTtlMs });
  const attempts = new OpenIdAttempts({ store, platform, userSync, clock, log, publicUrl, stateTtlMs: config.loginStateTtlMs });
  const deps: ConsoleDeps = {
    store,
    runner,
    readModels,
    outcomes,
    metrics,
    clock,
    admins,
    publicUrl,
    sessions,
    signIn: new ConsoleSignIn({ attempts, sessions, admins, publicUrl }),
    cookies: new ConsoleCookies({
      secret: loadSessionSecret(config.sessionSecret, config.dataDir),
      sessionTtlMs: settings.sessionTtlMs,
      loginTtlMs: config.loginStateTtlMs,
      secure: () => publicUrl().startsWith('https:'),
    }),
  };
  const router = consoleRouter(deps, () => []);
  return {
    routes: router.routes() as Middleware,
    async close() {},
  };
}
