// The PostgreSQL adapter's tables, and the migrations that make them. Each migration runs once,
// in order, and is recorded in schema_version with the rest of its transaction (PostgreSQL's DDL
// is transactional: a migration is applied whole or not at all). Several nodes starting at once
// queue on an advisory lock: the first migrates, the others find the schema current.
//
// The tables are created in the connection's current schema (search_path), so a database can
// hold several deployments, one schema each (`options=-c search_path=…` in the connection string).
//
// - events: one row per event. `position` is the global position, drawn from the sequence
//   events_position only while the append lock is held (postgres.ts: appends commit one at a
//   time, in position order); the unique (stream, revision) constraint is the concurrency guard.
//   data and metadata are `json`, which keeps the text as written (jsonb would reorder keys).
// - nodes: each process's last heartbeat, one row per instance (EventStore.beat).
import type { ClientBase, Pool } from 'pg';
import { transaction } from './postgresTransaction.js';

/** Advisory lock keys (pg_advisory_xact_lock): one for appends and deletions, one for migrations. */
export const APPEND_LOCK = 0x63627201;
export const MIGRATION_LOCK = 0x63627202;

/** A migration waits this long at most for another node's migration to finish. */
const MIGRATION_LOCK_TIMEOUT = '60s';

interface Migration {
  version: number;
  description: string;
  sql: string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'events, their position sequence, node heartbeats',
    sql: `
      CREATE SEQUENCE events_position AS bigint;
      CREATE TABLE events (
        position bigint      PRIMARY KEY,
        stream   text        NOT NULL,
        revision integer     NOT NULL,
        type     text        NOT NULL,
        data     json        NOT NULL,
        metadata json,
        created  timestamptz NOT NULL,
        CONSTRAINT events_stream_revision UNIQUE (stream, revision)
      );
      CREATE TABLE nodes (
        instance text   PRIMARY KEY,
        node     text   NOT NULL,
        started  text   NOT NULL,
        clock_ms bigint NOT NULL,
        count    bigint NOT NULL
      );
    `,
  },
];

/** The schema version this build reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** The database holds a schema newer than this build knows: an older build must not write to it. */
export class SchemaTooNewError extends Error {
  override readonly name = 'SchemaTooNewError';
}

export interface MigrationResult {
  /** The version found (0: no schema yet). */
  from: number;
  to: number;
}

/** The schema version the database holds; 0 when it holds none. */
export async function schemaVersion(db: ClientBase | Pool): Promise<number> {
  const { rows } = await db.query<{ present: boolean }>("SELECT to_regclass('schema_version') IS NOT NULL AS present");
  if (!rows[0]!.present) return 0;
  const current = await db.query<{ version: number }>('SELECT coalesce(max(version), 0)::int AS version FROM schema_version');
  return current.rows[0]!.version;
}

/** Brings the schema to SCHEMA_VERSION; safe to run from several nodes at once. */
export async function migrate(pool: Pool): Promise<MigrationResult> {
  return transaction(pool, `SET LOCAL lock_timeout = '${MIGRATION_LOCK_TIMEOUT}'; SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, async (client) => {
    await client.query(`
      CREATE TABLE IF NOT EXISTS schema_version (
        version     integer     PRIMARY KEY,
        description text        NOT NULL,
        applied     timestamptz NOT NULL DEFAULT now()
      )`);
    const from = await schemaVersion(client);
    if (from > SCHEMA_VERSION) {
      throw new SchemaTooNewError(`the database's schema is at version ${from}, newer than this build knows (${SCHEMA_VERSION}): run a build at least as new`);
    }
    for (const migration of MIGRATIONS.filter((m) => m.version > from)) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_version (version, description) VALUES ($1, $2)', [migration.version, migration.description]);
    }
    return { from, to: SCHEMA_VERSION };
  });
}
