// The operator console (/console), built for the composition root when CONSOLE_ADMINS is set:
// its sessions, sign-in and routes over the service's own parts; consoleOffRoutes when it is not.
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import type { HttpDeps } from '../http/deps.js';
import type { Logger } from '../log.js';
import { OpenIdAttempts } from '../realtime/openIdAttempts.js';
import { loadSessionSecret } from '../realtime/sessions.js';
import { ApiKeyService } from '../services/apiKeys.js';
import { consoleAssets } from './assets.js';
import type { ConsoleIndex } from './consoleIndex.js';
import { ConsoleCookies } from './cookies.js';
import { EventFollows } from './follow.js';
import type { ConsoleDeps } from './deps.js';
import { consoleRouter, isConsolePath } from './routes.js';
import { ConsoleSessions } from './sessions.js';
import { SessionWatch } from './sessionWatch.js';
import { ConsoleSignIn } from './signIn.js';
import { ConsoleStreams } from './streams.js';

export { consoleOffRoutes } from './routes.js';

export interface Console {
  /** Every /console route. */
  routes: Middleware;
  /** Ends what the console holds open (live streams), before the server waits for requests. */
  close(): Promise<void>;
}

export type ConsoleSettings = NonNullable<Config['console']> & {
  /**
   * Development only (`npm run dev`), and only from the sources: the console watches its
   * front-end files and open pages reload when one changes. Off unless set.
   */
  liveReload?: boolean;
};

/** `index`: what the console keeps beside the read models, folded by the service's runner. */
export function createConsole(settings: ConsoleSettings, config: Config, http: HttpDeps, index: ConsoleIndex, log: Logger): Console {
  const { store, runner, readModels, outcomes, metrics, clock, platform, userSync, pushLimits, api, liveness, webhooks, presence, clockReading } = http;
  const publicUrl = http.realtime.publicUrl;
  const admins = new Set(settings.admins);
  const sessions = new ConsoleSessions({ store, clock, ttlMs: settings.sessionTtlMs });
  const attempts = new OpenIdAttempts({
    store,
    platform,
    userSync,
    clock,
    log,
    publicUrl,
    stateTtlMs: config.loginStateTtlMs,
    secret: loadSessionSecret(config.sessionSecret, config.dataDir),
  });
  const streams = new ConsoleStreams(new SessionWatch({ sessions, admins, clock }), undefined, http.addressing);
  const follows = new EventFollows({ store, streams });
  const deps: ConsoleDeps = {
    store,
    pushLimits,
    liveness,
    presence,
    clockReading,
    api,
    nodeId: config.nodeId,
    keys: new ApiKeyService({ store, runner, keys: readModels.apiKeys, clock }),
    index,
    follows,
    streams,
    runner,
    readModels,
    outcomes,
    webhooks,
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
  const assets = consoleAssets({ liveReload: settings.liveReload === true, log });
  const routes = consoleRouter(deps, assets).routes() as Middleware;
  return {
    // Every console path starts /console: the API's requests skip matching them against its routes.
    routes: (ctx, next) => (isConsolePath(ctx.path) ? routes(ctx, next) : next()),
    async close() {
      streams.close();
      await assets.close();
    },
  };
}
