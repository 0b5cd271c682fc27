// Builds the realtime side (docs/architecture.md, "Realtime") for the composition root: the hub, sessions, the
// sign-in flow and what the routes need. The hub is started here; stop it before the server.
import type { CommunityPlatform } from '../community/port.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { ClientsReadModel } from '../projections/clients.js';
import type { RecentMessagesReadModel } from '../projections/recentMessages.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { SessionsReadModel } from '../projections/sessions.js';
import type { UsersReadModel } from '../projections/users.js';
import type { Clock } from '../system/clock.js';
import type { UserSync } from '../services/userSync.js';
import type { EventStore } from '../store/port.js';
import { ConnectionAdmission } from './admission.js';
import { BrowserCookies } from './browserCookies.js';
import { Clients } from './clients.js';
import type { RealtimeDeps } from './deps.js';
import { RealtimeHub } from './hub.js';
import { OpenIdAttempts } from './openIdAttempts.js';
import { loadSessionSecret, SessionCookies, Sessions } from './sessions.js';
import { SignIn } from './signIn.js';

const DAY_MS = 86_400_000;

export interface RealtimeParts {
  config: Config;
  store: EventStore;
  runner: ProjectionRunner;
  readModels: { users: UsersReadModel; clients: ClientsReadModel; sessions: SessionsReadModel; recentMessages: RecentMessagesReadModel };
  platform: CommunityPlatform;
  userSync: UserSync;
  clock: Clock;
  log: Logger;
  /** PUBLIC_URL, or the service's own URL once it listens. */
  publicUrl: () => string;
}

export function createRealtime({ config, store, runner, readModels, platform, userSync, clock, log, publicUrl }: RealtimeParts): RealtimeDeps {
  if (!config.sessionSecret && config.eventStoreConnectionString) {
    log.warn('SESSION_SECRET is not set: session cookies are signed with a secret of this node only; nodes sharing the store must share SESSION_SECRET');
  }
  const hub = new RealtimeHub({
    store,
    runner,
    users: readModels.users,
    recentMessages: readModels.recentMessages,
    clock,
    log,
    heartbeatMs: config.realtime.heartbeatMs,
    clients: readModels.clients,
    nodeId: config.nodeId,
    maxDataDepth: config.push.maxDepth,
  });
  hub.start();
  const clients = new Clients({ store, clients: readModels.clients });
  const sessionTtlMs = config.sessionTtlDays * DAY_MS;
  const secure = () => publicUrl().startsWith('https:');
  const secret = loadSessionSecret(config.sessionSecret, config.dataDir);
  return {
    hub,
    clients,
    sessions: new Sessions({ store, runner, sessions: readModels.sessions, users: readModels.users, clock }),
    cookies: new SessionCookies({
      secret,
      ttlMs: sessionTtlMs,
      secure,
    }),
    browserCookies: new BrowserCookies({ secure, loginPath: `/${config.community.name}/`, loginTtlMs: config.loginStateTtlMs }),
    signIn: new SignIn({
      store,
      runner,
      attempts: new OpenIdAttempts({ store, platform, userSync, clock, log, publicUrl, stateTtlMs: config.loginStateTtlMs, secret }),
      clients,
      clock,
      publicUrl,
      communityName: config.community.name,
      sessionTtlMs,
    }),
    communityName: config.community.name,
    corsOrigins: config.corsOrigins,
    log,
    admission: new ConnectionAdmission({ perAddress: config.realtime.maxConnectionsPerIp, total: config.realtime.maxConnections }),
    publicUrl,
  };
}
