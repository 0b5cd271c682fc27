// The PostgreSQL connections of a store, or of a CLI command: settings from the connection
// string (postgresConnection.ts), and the bounds every connection runs under.
import pg from 'pg';
import type { ClientConfig, CustomTypesConfig } from 'pg';
import { postgresConnection } from './postgresConnection.js';

/** A connection attempt gives up after this. */
export const CONNECT_TIMEOUT_MS = 5000;
/** The server ends a statement that runs longer than this. */
const STATEMENT_TIMEOUT_MS = 5000;
/**
 * This node gives up on a statement it has had no answer to after this: a connection that went
 * silent (a black-holed network, a frozen server) is noticed within it, and is then closed.
 * Longer than the server's own timeout, so that on a healthy connection the server's ends it first.
 */
export const QUERY_TIMEOUT_MS = 7000;
/** A statement waits this long at most for a lock (an append for the append lock). */
const LOCK_TIMEOUT_MS = 4000;
/** The server ends a session left idle inside a transaction this long (a CLI check's transaction, never an append). */
const IDLE_IN_TRANSACTION_MS = 10_000;
/** TCP keepalive probes start after this much silence on a connection. */
const KEEPALIVE_IDLE_MS = 5000;
/** Pooled connections idle this long are closed. */
const IDLE_CONNECTION_MS = 30_000;

/** bigint columns (positions, clocks, counts) as numbers: exact up to 2^53, far beyond any log here. */
const INT8_OID = 20;
const types: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text')) as CustomTypesConfig['getTypeParser'],
};

export interface PostgresConnections {
  pool: pg.Pool;
  /** The settings of one connection, for a connection of its own outside the pool. */
  client: ClientConfig;
}

export interface PoolOptions {
  /** Connections at most; pool_size from the string unless set. */
  max?: number;
  /** Statements run as long as they take (migrations, checks): no statement or query timeout. */
  unbounded?: boolean;
}

/** A pool of pool_size connections (or `max`); opens none until asked. Throws when the string cannot be used. */
export function openPool(connectionString: string, options: PoolOptions = {}): PostgresConnections {
  const { client: parsed, poolSize } = postgresConnection(connectionString);
  const client: ClientConfig = {
    application_name: 'community-bridge',
    ...parsed,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    ...(!options.unbounded && { statement_timeout: STATEMENT_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS }),
    lock_timeout: LOCK_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    types,
  };
  const max = options.max;
  const pool = new pg.Pool({ ...client, max: max ?? poolSize, idleTimeoutMillis: IDLE_CONNECTION_MS });
  // An idle pooled connection that fails (the server restarted, an operator ended it) is dropped
  // by the pool and the next query opens another; unheard, its error would end the process.
  pool.on('error', () => undefined);
  return { pool, client };
}
