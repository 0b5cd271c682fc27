// EVENTSTORE_CONNECTION_STRING: its scheme chooses the store.
//
// - postgresql:// or postgres://: PostgreSQL (postgresConnection.ts reads the rest).
// - esdb://, esdb+discover://, kurrentdb://, kurrentdb+discover://: EventStoreDB. KurrentDB, the
//   renamed EventStoreDB, documents `kurrentdb://`: the same format under a new scheme, which
//   client 6.x does not parse. The server speaks the same protocol, so the scheme is translated
//   here rather than refused.
import { postgresConnectionProblem } from './postgresConnection.js';

const ESDB_SCHEME = /^(esdb|kurrentdb)(\+discover)?:\/\//;
const POSTGRES_SCHEME = /^postgres(ql)?:\/\//;

export type StoreKind = 'postgresql' | 'eventstoredb';

/** The store a connection string names by its scheme; undefined when the scheme is none of them. */
export function storeKindOf(connectionString: string): StoreKind | undefined {
  if (POSTGRES_SCHEME.test(connectionString)) return 'postgresql';
  if (ESDB_SCHEME.test(connectionString)) return 'eventstoredb';
  return undefined;
}

/** A message saying what is wrong with the string, or undefined when its store can take it. */
export function connectionStringProblem(connectionString: string): string | undefined {
  const kind = storeKindOf(connectionString);
  if (kind === 'postgresql') return postgresConnectionProblem(connectionString);
  const scheme = ESDB_SCHEME.exec(connectionString);
  if (!scheme) return 'must start with postgresql://, postgres://, esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover://';
  // The client wants at least one host (host[:port]) after the scheme and any credentials.
  const rest = connectionString.slice(scheme[0].length).replace(/^[^@/?]*@/, '');
  if (!/^[^/?,:]+(:\d+)?/.test(rest)) return `names no host after ${scheme[0]} (e.g. ${scheme[0]}localhost:2113?tls=false)`;
  return undefined;
}

/** The string with a `kurrentdb` scheme turned into the `esdb` one client 6.x parses. */
export function forEventStoreDbClient(connectionString: string): string {
  return connectionString.replace(/^kurrentdb(\+discover)?:\/\//, 'esdb$1://');
}

/** Query parameters shown as they are (the drivers' settings that hold no secret). */
const PLAIN_PARAMETERS = new Set([
  'host',
  'port',
  'user',
  'db',
  'database',
  'application_name',
  'fallback_application_name',
  'options',
  'client_encoding',
  'encoding',
  'connect_timeout',
  'keepalives',
  'keepalives_idle',
  'target_session_attrs',
  'replication',
  'ssl',
  'sslmode',
  'sslnegotiation',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'uselibpqcompat',
  'pool_size',
  'tls',
  'tlsverifycert',
  'tlscafile',
  'connectionname',
  'nodepreference',
  'keepaliveinterval',
  'keepalivetimeout',
  'maxdiscoverattempts',
  'discoveryinterval',
  'gossiptimeout',
  'defaultdeadline',
  'throwonappendfailure',
]);

const HIDDEN = '***';

/**
 * A postgresql:// string as node-postgres's parser (pg-connection-string) reads it: a WHATWG URL,
 * after the same re-encoding of spaces and stray `%`, with the same retry for an empty host.
 * So its credentials end at the last `@` of the authority, as the driver's do.
 */
function postgresUrl(connectionString: string): { url: URL; emptyHost: boolean } | undefined {
  let text = connectionString;
  if (/ |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(text)) text = encodeURI(text).replace(/%25(\d\d)/g, '%$1');
  if (URL.canParse(text, 'postgres://base')) return { url: new URL(text, 'postgres://base'), emptyHost: false };
  const dummy = text.replace('@/', '@___DUMMY___/');
  return URL.canParse(dummy, 'postgres://base') ? { url: new URL(dummy, 'postgres://base'), emptyHost: true } : undefined;
}

/** Parameters that hold a secret: named, their values hidden. */
const SECRET_PARAMETERS = new Set(['password', 'sslpassword']);

/** Known parameters as they are, secret ones as `name=***`, any other whole as `***` (its name may be a misplaced secret). */
function redactedParameters(search: URLSearchParams): string {
  const shown = [...search].map(([name, value]) => {
    const known = name.toLowerCase();
    if (PLAIN_PARAMETERS.has(known)) return `${name}=${value.replace(/[\s%&#]/g, encodeURIComponent)}`;
    return SECRET_PARAMETERS.has(known) ? `${name}=${HIDDEN}` : HIDDEN;
  });
  return shown.length > 0 ? `?${shown.join('&')}` : '';
}

function redactedPostgres(connectionString: string): string {
  const parsed = postgresUrl(connectionString);
  const scheme = connectionString.slice(0, connectionString.indexOf('://'));
  // An `@` that did not end credentials: a password holding `/`, `?` or `#` was read as a host,
  // a port, a path or a query; nothing of such a string is shown.
  if (!parsed || (connectionString.includes('@') && !parsed.url.username && !parsed.url.password)) return `${scheme}://${HIDDEN}`;
  const { url, emptyHost } = parsed;
  const credentials = url.username || url.password ? `${url.username}${url.password ? `:${HIDDEN}` : ''}@` : '';
  const plain = (part: string) => (part.includes('@') || part.includes('%40') ? HIDDEN : part);
  const host = emptyHost ? '' : plain(url.host);
  // The fragment is ignored by the driver: never shown.
  return `${scheme}://${credentials}${host}${plain(url.pathname)}${redactedParameters(url.searchParams)}`;
}

/**
 * An esdb:// (or kurrentdb://) string as the EventStoreDB client reads it: its credentials are
 * `user:password@` with no `@` in the password. An `@` left before the query is a password that
 * held one (the client would take the rest as hosts): everything up to it is hidden too.
 */
function redactedEventStoreDb(connectionString: string): string {
  const scheme = ESDB_SCHEME.exec(connectionString)![0];
  const rest = connectionString.slice(scheme.length);
  const credentials = /^([^:]+):[^@]+@/.exec(rest);
  let after = credentials ? rest.slice(credentials[0].length) : rest;
  const queryStart = after.indexOf('?');
  const lastAt = (queryStart < 0 ? after : after.slice(0, queryStart)).lastIndexOf('@');
  if (lastAt >= 0) after = after.slice(lastAt + 1);
  const user = credentials ? credentials[1] : lastAt >= 0 ? '' : undefined;
  const hostsEnd = after.indexOf('?');
  const hosts = hostsEnd < 0 ? after : after.slice(0, hostsEnd);
  const search = hostsEnd < 0 ? '' : redactedParameters(new URLSearchParams(after.slice(hostsEnd + 1)));
  return `${scheme}${user === undefined ? '' : `${user}:${HIDDEN}@`}${hosts}${search}`;
}

/**
 * The string without its secrets, for logs, error messages and the CLI: read as its driver reads
 * it, every password (in the credentials however many `@` it holds, or a `password` or
 * `sslpassword` parameter) and every parameter not known to be harmless are `***`.
 */
export function redactedConnectionString(connectionString: string): string {
  const kind = storeKindOf(connectionString);
  if (kind === 'postgresql') return redactedPostgres(connectionString);
  if (kind === 'eventstoredb') return redactedEventStoreDb(connectionString);
  return HIDDEN;
}
