// A postgresql:// connection string as the PostgreSQL adapter uses it. node-postgres's own parser
// (pg-connection-string) reads it, so its parameters mean what they mean there: sslmode
// (disable, no-verify, verify-full; prefer, require and verify-ca are taken as verify-full unless
// uselibpqcompat=true), sslrootcert (a CA file, read at start), sslcert and sslkey (a client
// certificate), application_name, options (e.g. `-c search_path=bridge`), host (a socket
// directory). One parameter is this service's own and is taken out before the string reaches
// the driver: pool_size, the connections a node opens for its queries.
import { parseIntoClientConfig } from 'pg-connection-string';
import type { ClientConfig } from 'pg';

/** Connections per node for queries (one more listens for appends): pool_size, within these bounds. */
export const POOL_SIZE = { default: 10, min: 1, max: 100 } as const;

const POOL_SIZE_PARAMETER = 'pool_size';

export interface PostgresConnection {
  client: ClientConfig;
  poolSize: number;
}

function poolSizeProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const size = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || size < POOL_SIZE.min || size > POOL_SIZE.max) {
    return `${POOL_SIZE_PARAMETER} must be a whole number from ${POOL_SIZE.min} to ${POOL_SIZE.max}`;
  }
  return undefined;
}

/** A message saying what is wrong with a postgresql:// string, or undefined when it can be used. */
export function postgresConnectionProblem(connectionString: string): string | undefined {
  let config: ClientConfig & Record<string, unknown>;
  try {
    config = parseIntoClientConfig(connectionString) as ClientConfig & Record<string, unknown>;
  } catch (error) {
    const cause = error as NodeJS.ErrnoException;
    if (cause.path) return `cannot read ${cause.path}, named by sslrootcert, sslcert or sslkey (${cause.code ?? cause.message})`;
    return `cannot be parsed as a PostgreSQL URL (${cause.message})`;
  }
  if (!config.host) return 'names no host (e.g. postgresql://bridge@db.example:5432/bridge, or ?host=/run/postgresql for a socket directory)';
  return poolSizeProblem(config[POOL_SIZE_PARAMETER]);
}

/** The driver's settings and the pool size; throws with the problem when the string cannot be used. */
export function postgresConnection(connectionString: string): PostgresConnection {
  const problem = postgresConnectionProblem(connectionString);
  if (problem) throw new Error(`The connection string ${problem}`);
  const { [POOL_SIZE_PARAMETER]: poolSize, ...client } = parseIntoClientConfig(connectionString) as ClientConfig & Record<string, unknown>;
  return { client, poolSize: poolSize === undefined ? POOL_SIZE.default : Number(poolSize) };
}

/**
 * One line saying why a PostgreSQL call failed. A refused connection to a name with several
 * addresses comes as an AggregateError without a message of its own: its first error says it.
 */
export function postgresFailureReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message.split('\n')[0]!;
  const first = (error as Partial<AggregateError>).errors?.[0];
  if (first !== undefined) return postgresFailureReason(first);
  return (error as NodeJS.ErrnoException).code ?? error.name;
}
