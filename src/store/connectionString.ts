// EVENTSTORE_CONNECTION_STRING as the EventStoreDB client (6.x) takes it. KurrentDB, the
// renamed EventStoreDB, documents `kurrentdb://` and `kurrentdb+discover://`: the same format
// under a new scheme, which client 6.x does not parse. The server speaks the same protocol, so
// the scheme is translated here rather than refused.

const SCHEME = /^(esdb|kurrentdb)(\+discover)?:\/\//;

/** A message saying what is wrong with the string, or undefined when the client can take it. */
export function connectionStringProblem(connectionString: string): string | undefined {
  const scheme = SCHEME.exec(connectionString);
  if (!scheme) return 'must start with esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover://';
  // The client wants at least one host (host[:port]) after the scheme and any credentials.
  const rest = connectionString.slice(scheme[0].length).replace(/^[^@/?]*@/, '');
  if (!/^[^/?,:]+(:\d+)?/.test(rest)) return `names no host after ${scheme[0]} (e.g. ${scheme[0]}localhost:2113?tls=false)`;
  return undefined;
}

/** The string with a `kurrentdb` scheme turned into the `esdb` one client 6.x parses. */
export function forEventStoreDbClient(connectionString: string): string {
  return connectionString.replace(/^kurrentdb(\+discover)?:\/\//, 'esdb$1://');
}

/** The string without its password, for logs and error messages. */
export function redactedConnectionString(connectionString: string): string {
  return connectionString.replace(/^([a-z+]+:\/\/[^:@/?]+):[^@/?]*@/, '$1:***@');
}
