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

/** The string without its password (in the credentials or a `password` parameter), for logs and error messages. */
export function redactedConnectionString(connectionString: string): string {
  return connectionString.replace(/^([a-z+]+:\/\/[^:@/?]+):[^@/?]*@/, '$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}
