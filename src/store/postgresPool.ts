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
const TIMESTAMPTZ_OID = 1184;

const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => Date;

/**
 * A timestamptz as the ISO string events carry (`toISOString()`'s, to the millisecond), not a
 * Date: a catch-up reads one per event, and parsing it into a Date and out again costs as much as
 * the rest of the row. A server in UTC writes "2026-11-29 12:00:00.123456+00" (trailing zeros of
 * the fraction left out), whose parts rearranged are that string, the fraction cut as a Date cuts
 * it; any other offset goes through a Date.
 */
export function isoTimestamp(text: string): string {
  if (text.length >= 22 && text.length <= 29 && text.charCodeAt(10) === 32 && text.endsWith('+00') && (text.length === 22 || text.charCodeAt(19) === 46)) {
    const fraction = text.slice(20, text.length - 3);
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${`${fraction}000`.slice(0, 3)}Z`;
  }
  return parseTimestamptz(text).toISOString();
}

const types: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === 'binary') return pg.types.getTypeParser(oid, format);
    if (oid === INT8_OID) return (value: string) => Number(value);
    if (oid === TIMESTAMPTZ_OID) return isoTimestamp;
    return pg.types.getTypeParser(oid, 'text');
  }) as CustomTypesConfig['getTypeParser'],
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
