// Environment → validated configuration, in one place (README's configuration table). Every knob is optional
// and has a default; a bad value stops start-up with a message that names the variable.
import { hostname } from 'node:os';
import * as v from 'valibot';
import { connectionStringProblem } from './store/connectionString.js';
import { defaultMaxConnections, defaultMaxSockets } from './openFilesLimit.js';
import { OID_PATTERN, OID_RULE } from './domain/user.js';
import { readSecretFiles, type SecretFiles } from './secretFiles.js';

const port = (fallback: string) => v.pipe(v.optional(v.string(), fallback), v.transform(Number), v.integer('must be a whole number'), v.minValue(0), v.maxValue(65535));
const positiveInt = (fallback: string) => v.pipe(v.optional(v.string(), fallback), v.transform(Number), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'));
const nonNegativeNumber = (fallback: string) => v.pipe(v.optional(v.string(), fallback), v.transform(Number), v.number('must be a number'), v.minValue(0, 'must be 0 or more'));
const flag = (fallback: 'true' | 'false') =>
  v.pipe(
    v.optional(v.picklist(['true', 'false', '1', '0'], 'must be true or false'), fallback),
    v.transform((f) => f === 'true' || f === '1'),
  );
const optionalText = v.optional(v.pipe(v.string(), v.trim(), v.minLength(1)));
const url = v.pipe(v.string(), v.url('must be a URL'));

const EnvSchema = v.object({
  PORT: port('8090'),
  HOST: v.optional(v.string(), '127.0.0.1'),
  DATA_DIR: v.optional(v.string(), './data'),
  EVENTSTORE_CONNECTION_STRING: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) => !connectionStringProblem(s),
        (issue) => connectionStringProblem(String(issue.input))!,
      ),
    ),
  ),
  COMMUNITY_URL: v.optional(url, 'https://fishpi.cn'),
  COMMUNITY_KEY: optionalText,
  COMMUNITY_KEY_POINT: optionalText,
  COMMUNITY_KEY_MEDAL: optionalText,
  COMMUNITY_KEY_ITEM: optionalText,
  COMMUNITY_KEY_LIVENESS: optionalText,
  COMMUNITY_NAME: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/, 'must be a path segment of [a-z0-9-]')), 'fishpi'),
  COMMUNITY_TIMEOUT_MS: positiveInt('5000'),
  PUBLIC_URL: v.optional(url),
  SESSION_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'))),
  CORS_ORIGINS: v.optional(v.string(), ''),
  REALTIME_HEARTBEAT_MS: positiveInt('15000'),
  REALTIME_REPLAY_MS: positiveInt('600000'),
  REALTIME_REPLAY_MAX_BYTES: positiveInt('67108864'),
  SESSION_TTL_DAYS: positiveInt('30'),
  LOGIN_STATE_TTL_MS: positiveInt('600000'),
  NODE_HEARTBEAT_MS: positiveInt('1000'),
  CLOCK_MAX_OFFSET_MS: positiveInt('2000'),
  NODE_ID: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1 to 64 of [A-Za-z0-9_.:-]'))),
  LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  COMMUNITY_POINTS_SOURCE: flag('false'),
  IDEMPOTENCY_TTL_HOURS: nonNegativeNumber('24'),
  IDEMPOTENCY_CLAIM_STALE_MS: positiveInt('60000'),
  OPERATION_PENDING_GRACE_MS: positiveInt('300000'),
  RATE_LIMIT_PER_SECOND: nonNegativeNumber('0'),
  RATE_LIMIT_BURST: v.optional(v.pipe(v.string(), v.transform(Number), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'))),
  SHUTDOWN_TIMEOUT_MS: positiveInt('10000'),
  PUSH_MAX_DEPTH: v.pipe(positiveInt('32'), v.maxValue(1000, 'must be at most 1000')),
  PUSH_MAX_BYTES: positiveInt('65536'),
  PUSH_MAX_RECIPIENTS: positiveInt('10000'),
  PUSH_RECIPIENTS_PER_SECOND: nonNegativeNumber('50000'),
  REALTIME_MAX_CONNECTIONS_PER_IP: positiveInt('200'),
  SIGN_IN_PAGES_PER_SECOND: nonNegativeNumber('5'),
  SIGN_IN_PAGES_BURST: positiveInt('30'),
  SIGN_IN_PAGES_PER_NODE_PER_SECOND: nonNegativeNumber('200'),
  REALTIME_CONNECTS_PER_SECOND: nonNegativeNumber('5'),
  REALTIME_CONNECTS_BURST: positiveInt('50'),
  REALTIME_CONNECTS_PER_NODE_PER_SECOND: nonNegativeNumber('200'),
  REALTIME_MAX_CONNECTIONS: v.optional(v.pipe(v.string(), v.transform(Number), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'))),
  TRUST_PROXY: flag('false'),
  HTTP_MAX_CONNECTIONS: v.optional(v.pipe(v.string(), v.transform(Number), v.integer('must be a whole number'), v.minValue(2, 'must be at least 2'))),
  HTTP_MAX_CONNECTIONS_PER_IP: positiveInt('512'),
  HTTP_HEADERS_TIMEOUT_MS: positiveInt('10000'),
  HTTP_REQUEST_TIMEOUT_MS: positiveInt('30000'),
  CLIENT_IPV6_PREFIX_LENGTH: v.pipe(positiveInt('64'), v.minValue(16, 'must be at least 16'), v.maxValue(128, 'must be at most 128')),
  ANONYMOUS_RETENTION_MS: nonNegativeNumber('120000'),
  READ_MODEL_SNAPSHOTS: flag('true'),
  SNAPSHOT_EVERY_EVENTS: positiveInt('100000'),
  SNAPSHOT_INTERVAL_MS: positiveInt('600000'),
  CONSOLE_ADMINS: v.optional(
    v.pipe(
      v.string(),
      v.transform((list) =>
        list
          .split(',')
          .map((oId) => oId.trim())
          .filter(Boolean),
      ),
      v.check((oIds) => oIds.every((oId) => OID_PATTERN.test(oId)), `must be comma-separated oIds (${OID_RULE})`),
    ),
  ),
  CONSOLE_SESSION_TTL_MINUTES: positiveInt('480'),
  CONSOLE_LIVE_RELOAD: flag('false'),
  WEBHOOKS_ALLOW_PRIVATE: flag('false'),
  WEBHOOKS_TIMEOUT_MS: positiveInt('10000'),
  WEBHOOKS_RETRY_HOURS: v.pipe(
    nonNegativeNumber('72'),
    v.check((n) => n > 0, 'must be more than 0'),
  ),
  WEBHOOKS_RETRY_FIRST_MS: positiveInt('30000'),
  WEBHOOKS_MAX_PER_APP: positiveInt('10'),
  WEBHOOKS_MAX_IN_FLIGHT: positiveInt('16'),
  WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT: positiveInt('4'),
  WEBHOOKS_ROTATION_OVERLAP_HOURS: nonNegativeNumber('24'),
});

type Env = v.InferOutput<typeof EnvSchema>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  eventStoreConnectionString: string | undefined;
  /** The file EVENTSTORE_CONNECTION_STRING_FILE named, when the connection string came from one. */
  eventStoreConnectionStringFile?: string;
  community: {
    url: string;
    name: string;
    timeoutMs: number;
    /** By the platform's key types (GoldFingerType): `metal` is the medals' key. */
    keys: { point?: string; metal?: string; item?: string; liveness?: string };
    /** Send the platform's source fields with points edits (newer builds: end-to-end dedup). */
    pointsSource: boolean;
  };
  idempotencyTtlMs: number;
  /** A claimed Idempotency-Key whose request recorded no operation may be taken over after this. */
  idempotencyClaimStaleMs: number;
  /** Any node marks an operation still pending after this long as unknown (its sender is gone). */
  operationPendingGraceMs: number;
  /** undefined: no rate limit. */
  rateLimit: { perSecond: number; burst: number } | undefined;
  shutdownTimeoutMs: number;
  /** Base URL browsers reach the service at; `undefined` means "http://HOST:PORT once listening". */
  publicUrl: string | undefined;
  sessionSecret: string | undefined;
  corsOrigins: string[];
  /** Names this node in the log (which node holds which realtime client). */
  nodeId: string;
  /** How often this node records its heartbeat in the store (its lease, and its clock reading). */
  nodeHeartbeatMs: number;
  /** Past this offset from the log's clock the node reports itself not ready and judges no other node's work. */
  clockMaxOffsetMs: number;
  realtime: {
    /** Interval of the heartbeat comment frame on every stream. */
    heartbeatMs: number;
    /** How long a pushed message can be replayed to a reconnecting client (Last-Event-ID). */
    replayMs: number;
    /** Bytes of pushed messages kept for replay (their `data` as JSON, plus a small overhead each); the oldest go first past it. */
    replayMaxBytes: number;
    /** Open streams one client address may hold on this node (429 past it). */
    maxConnectionsPerIp: number;
    /** Open streams this node holds at most (503 past it). */
    maxConnections: number;
  };
  /** Bounds of a push: its `data`, its recipients, and one app's recipients per second on a node (undefined: none). */
  push: { maxDepth: number; maxBytes: number; maxRecipients: number; recipientsPerSecond: number | undefined };
  /** Sockets the node holds, in all and per client address (not behind a proxy), and how long a request may take to arrive. */
  sockets: { maxConnections: number; maxConnectionsPerIp: number; headersTimeoutMs: number; requestTimeoutMs: number };
  /** The client address is taken from X-Forwarded-For (a reverse proxy in front), else the socket. */
  trustProxy: boolean;
  /** IPv6 client addresses sharing this many leading bits count as one address for every per-address bound. */
  ipv6PrefixLength: number;
  /** Login pages and sign-in callbacks one client address, and the whole node, may serve (429 past either). */
  signInPageRates: { perAddress: { perSecond: number; burst: number } | undefined; perNode: { perSecond: number; burst: number } | undefined };
  /** Realtime connects one client address, and the whole node, may open per second (429 / 503 past either). */
  realtimeConnectRates: { perAddress: { perSecond: number; burst: number } | undefined; perNode: { perSecond: number; burst: number } | undefined };
  /** Ended anonymous client streams and finished login streams are deleted this long after they end. */
  anonymousRetentionMs: number;
  /**
   * Read-model snapshots in DATA_DIR/snapshots: one is taken once `everyEvents` positions have been
   * applied since the last, at least every `intervalMs` while events arrive, and at a clean stop;
   * a start restores from it. undefined when they are off.
   */
  snapshots: { everyEvents: number; intervalMs: number } | undefined;
  /** Lifetime of a sign-in session (its cookie). */
  sessionTtlDays: number;
  /** How long a login page's single-use state stays valid. */
  loginStateTtlMs: number;
  /**
   * The operator console: who may use it, how long its sessions last, and whether its page reloads
   * itself when a front-end source changes (development); undefined when it is off.
   */
  console: { admins: string[]; sessionTtlMs: number; liveReload: boolean } | undefined;
  webhooks: WebhookSettings;
  logLevel: Env['LOG_LEVEL'];
  /** One line for each deprecated variable name in use, for the start-up output. */
  deprecatedNames?: string[];
}

/** Webhook deliveries (docs/api.md, "Webhooks"). */
export interface WebhookSettings {
  /** Private, loopback and link-local addresses may be registered and reached (development, tests). */
  allowPrivate: boolean;
  /** One attempt, connection to answer, at most this long. */
  timeoutMs: number;
  /** Attempts go on for `periodMs` after the event; the wait doubles from `firstIntervalMs` up to `maxIntervalMs`. */
  retry: { periodMs: number; firstIntervalMs: number; maxIntervalMs: number };
  maxEndpointsPerApp: number;
  /** Attempts in flight at once on the delivering node, and to one endpoint. */
  maxInFlight: number;
  maxInFlightPerEndpoint: number;
  /** A rotated secret still signs (second) this long. */
  rotationOverlapMs: number;
}

/** The longest wait between two attempts, however many failed before. */
export const WEBHOOK_MAX_RETRY_INTERVAL_MS = 6 * 3_600_000;

export class ConfigError extends Error {}

/** Old variable names still read, each as its new name (with its `_FILE` form). */
const DEPRECATED_NAMES: Record<string, string> = { COMMUNITY_KEY_METAL: 'COMMUNITY_KEY_MEDAL' };

/** Moves each deprecated variable in use to its new name; returns a warning line for each. */
function adoptDeprecatedNames({ env, sources, problems }: SecretFiles): string[] {
  const warnings: string[] = [];
  for (const [old, current] of Object.entries(DEPRECATED_NAMES)) {
    const value = env[old];
    delete env[old];
    if (value === undefined || value === '') continue;
    const suffix = sources.has(old) ? '_FILE' : '';
    if (env[current] !== undefined && env[current] !== '') {
      problems.push(`${old}${suffix} and ${current}${sources.has(current) ? '_FILE' : ''} are both set: set only ${current}`);
      continue;
    }
    env[current] = value;
    sources.set(current, sources.get(old) ?? old);
    sources.delete(old);
    warnings.push(`${old}${suffix} is deprecated: rename it ${current}${suffix}`);
  }
  return warnings;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Secrets may come from files (`COMMUNITY_KEY_FILE`, …); a value read there is checked like one set directly.
  const secrets = readSecretFiles(env);
  const deprecatedNames = adoptDeprecatedNames(secrets);
  // An empty variable means "not set", as compose files and shells commonly pass them.
  const present = Object.fromEntries(Object.entries(secrets.env).filter(([, value]) => value !== undefined && value !== ''));
  const result = v.safeParse(EnvSchema, present);
  const named = (variable: string) => secrets.sources.get(variable) ?? variable;
  const lines = [...secrets.problems, ...(result.success ? [] : result.issues.map((issue) => `${named(v.getDotPath(issue) ?? 'environment')}: ${issue.message}`))];
  if (!result.success || lines.length > 0) throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  const e = result.output;
  const sockets = e.HTTP_MAX_CONNECTIONS ?? defaultMaxSockets();
  const streams = e.REALTIME_MAX_CONNECTIONS ?? Math.min(defaultMaxConnections(), sockets - Math.max(1, Math.ceil(sockets / 20)));
  const conflicts = [
    ...(streams >= sockets
      ? [`REALTIME_MAX_CONNECTIONS (${streams}) must be below HTTP_MAX_CONNECTIONS (${sockets}): the sockets between them are the admin API's and the probes'`]
      : []),
    ...(e.HTTP_REQUEST_TIMEOUT_MS < e.HTTP_HEADERS_TIMEOUT_MS
      ? [`HTTP_REQUEST_TIMEOUT_MS (${e.HTTP_REQUEST_TIMEOUT_MS}) must be at least HTTP_HEADERS_TIMEOUT_MS (${e.HTTP_HEADERS_TIMEOUT_MS})`]
      : []),
  ];
  if (conflicts.length > 0) throw new ConfigError(`Invalid configuration:\n  ${conflicts.join('\n  ')}`);
  const key = (specific: string | undefined) => specific ?? e.COMMUNITY_KEY;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR,
    eventStoreConnectionString: e.EVENTSTORE_CONNECTION_STRING,
    ...(secrets.sources.has('EVENTSTORE_CONNECTION_STRING') && { eventStoreConnectionStringFile: env.EVENTSTORE_CONNECTION_STRING_FILE }),
    community: {
      url: e.COMMUNITY_URL.replace(/\/+$/, ''),
      name: e.COMMUNITY_NAME,
      timeoutMs: e.COMMUNITY_TIMEOUT_MS,
      keys: {
        point: key(e.COMMUNITY_KEY_POINT),
        metal: key(e.COMMUNITY_KEY_MEDAL),
        item: key(e.COMMUNITY_KEY_ITEM),
        liveness: key(e.COMMUNITY_KEY_LIVENESS),
      },
      pointsSource: e.COMMUNITY_POINTS_SOURCE,
    },
    idempotencyTtlMs: e.IDEMPOTENCY_TTL_HOURS * 3_600_000,
    idempotencyClaimStaleMs: e.IDEMPOTENCY_CLAIM_STALE_MS,
    operationPendingGraceMs: e.OPERATION_PENDING_GRACE_MS,
    rateLimit: e.RATE_LIMIT_PER_SECOND > 0 ? { perSecond: e.RATE_LIMIT_PER_SECOND, burst: e.RATE_LIMIT_BURST ?? Math.max(1, Math.ceil(e.RATE_LIMIT_PER_SECOND)) } : undefined,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    sessionSecret: e.SESSION_SECRET,
    corsOrigins: e.CORS_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    realtime: {
      heartbeatMs: e.REALTIME_HEARTBEAT_MS,
      replayMs: e.REALTIME_REPLAY_MS,
      replayMaxBytes: e.REALTIME_REPLAY_MAX_BYTES,
      maxConnectionsPerIp: e.REALTIME_MAX_CONNECTIONS_PER_IP,
      maxConnections: streams,
    },
    push: {
      maxDepth: e.PUSH_MAX_DEPTH,
      maxBytes: e.PUSH_MAX_BYTES,
      maxRecipients: e.PUSH_MAX_RECIPIENTS,
      recipientsPerSecond: e.PUSH_RECIPIENTS_PER_SECOND > 0 ? e.PUSH_RECIPIENTS_PER_SECOND : undefined,
    },
    sockets: {
      maxConnections: sockets,
      maxConnectionsPerIp: e.HTTP_MAX_CONNECTIONS_PER_IP,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    },
    trustProxy: e.TRUST_PROXY,
    ipv6PrefixLength: e.CLIENT_IPV6_PREFIX_LENGTH,
    signInPageRates: {
      perAddress: e.SIGN_IN_PAGES_PER_SECOND > 0 ? { perSecond: e.SIGN_IN_PAGES_PER_SECOND, burst: e.SIGN_IN_PAGES_BURST } : undefined,
      // A second's worth at once: a node-wide bound is for floods, not for spreading a burst.
      perNode:
        e.SIGN_IN_PAGES_PER_NODE_PER_SECOND > 0
          ? { perSecond: e.SIGN_IN_PAGES_PER_NODE_PER_SECOND, burst: Math.max(1, Math.ceil(e.SIGN_IN_PAGES_PER_NODE_PER_SECOND)) }
          : undefined,
    },
    realtimeConnectRates: {
      perAddress: e.REALTIME_CONNECTS_PER_SECOND > 0 ? { perSecond: e.REALTIME_CONNECTS_PER_SECOND, burst: e.REALTIME_CONNECTS_BURST } : undefined,
      // Ten seconds' worth at once: the streams of a node that restarted come back together.
      perNode:
        e.REALTIME_CONNECTS_PER_NODE_PER_SECOND > 0
          ? { perSecond: e.REALTIME_CONNECTS_PER_NODE_PER_SECOND, burst: Math.max(1, Math.ceil(10 * e.REALTIME_CONNECTS_PER_NODE_PER_SECOND)) }
          : undefined,
    },
    anonymousRetentionMs: e.ANONYMOUS_RETENTION_MS,
    snapshots: e.READ_MODEL_SNAPSHOTS ? { everyEvents: e.SNAPSHOT_EVERY_EVENTS, intervalMs: e.SNAPSHOT_INTERVAL_MS } : undefined,
    sessionTtlDays: e.SESSION_TTL_DAYS,
    loginStateTtlMs: e.LOGIN_STATE_TTL_MS,
    console: e.CONSOLE_ADMINS?.length ? { admins: e.CONSOLE_ADMINS, sessionTtlMs: e.CONSOLE_SESSION_TTL_MINUTES * 60_000, liveReload: e.CONSOLE_LIVE_RELOAD } : undefined,
    nodeId: e.NODE_ID ?? hostname(),
    nodeHeartbeatMs: e.NODE_HEARTBEAT_MS,
    clockMaxOffsetMs: e.CLOCK_MAX_OFFSET_MS,
    webhooks: {
      allowPrivate: e.WEBHOOKS_ALLOW_PRIVATE,
      timeoutMs: e.WEBHOOKS_TIMEOUT_MS,
      retry: {
        periodMs: e.WEBHOOKS_RETRY_HOURS * 3_600_000,
        firstIntervalMs: e.WEBHOOKS_RETRY_FIRST_MS,
        maxIntervalMs: Math.max(e.WEBHOOKS_RETRY_FIRST_MS, WEBHOOK_MAX_RETRY_INTERVAL_MS),
      },
      maxEndpointsPerApp: e.WEBHOOKS_MAX_PER_APP,
      maxInFlight: e.WEBHOOKS_MAX_IN_FLIGHT,
      maxInFlightPerEndpoint: e.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT,
      rotationOverlapMs: e.WEBHOOKS_ROTATION_OVERLAP_HOURS * 3_600_000,
    },
    logLevel: e.LOG_LEVEL,
    ...(deprecatedNames.length > 0 && { deprecatedNames }),
  };
}
