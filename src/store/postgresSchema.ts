// The PostgreSQL adapter's tables, and the migrations that make them. Each migration runs once,
// in order, and is recorded in schema_version with the rest of its transaction (PostgreSQL's DDL
// is transactional: a migration is applied whole or not at all). Several nodes starting at once
// queue on an advisory lock: the first migrates, the others find the schema current.
//
// The tables are created in the connection's current schema (search_path), so a database can
// hold several deployments, one schema each (`options=-c search_path=…` in the connection string).
//
// - events: one row per event. `position` is the global position, drawn from the sequence
//   events_seq only inside append_batch while it holds its schema's append lock (appends commit
//   one batch at a time, in position order); the unique (stream, revision) constraint is the
//   concurrency guard. data and metadata are `json`, which keeps the text as written (jsonb
//   would reorder keys).
// - append_batch(...): one statement appends a whole batch of a node's appends (postgresAppender.ts).
//   It takes the append lock inside the statement, so the lock never outlives the statement and
//   its commit: no client round trip happens while it is held.
// - nodes: each process's last heartbeat, one row per instance (EventStore.beat).
//
// Advisory locks are per database: their second key is a hash of the schema's name, so two
// deployments in separate schemas never wait for each other.
import type { ClientBase, Pool } from 'pg';
import { transaction } from './postgresTransaction.js';

/** First key of the advisory locks (pg_advisory_xact_lock(int, int)): appends, migrations. */
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
  {
    version: 2,
    description: 'appends as one statement per batch (append_batch), the append lock per schema',
    // Renaming the sequence also stops nodes of an older build from appending (their statement
    // names events_position): they took another lock, and their commits would interleave.
    sql: `
      ALTER SEQUENCE events_position RENAME TO events_seq;
      CREATE FUNCTION append_batch(
        streams text[], expected int[], side_streams text[], side_expected int[], counts int[], side_counts int[],
        types text[], datas json[], metadatas json[]
      ) RETURNS TABLE (outcome text, conflict_stream text, actual_revision int, last_position bigint, next_revision int, side_revision int)
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        i int;
        offs int := 0;
        n int;
        sn int;
        cur int;
        side_cur int;
        first bigint;
        recorded timestamptz;
      BEGIN
        -- Held until this statement's commit: positions are drawn and committed in one order.
        PERFORM pg_advisory_xact_lock(${APPEND_LOCK}, hashtext(current_schema()));
        recorded := clock_timestamp();
        FOR i IN 1 .. coalesce(array_length(streams, 1), 0) LOOP
          n := counts[i];
          sn := side_counts[i];
          outcome := 'ok'; conflict_stream := NULL; actual_revision := NULL; last_position := NULL; next_revision := NULL; side_revision := NULL;
          SELECT coalesce(max(e.revision), -1) INTO cur FROM events e WHERE e.stream = streams[i];
          side_cur := -1;
          IF side_streams[i] IS NOT NULL THEN
            SELECT coalesce(max(e.revision), -1) INTO side_cur FROM events e WHERE e.stream = side_streams[i];
          END IF;
          -- expected: -2 any revision, -1 no stream, else the stream's last revision.
          IF expected[i] <> -2 AND expected[i] <> cur THEN
            outcome := 'conflict'; conflict_stream := streams[i]; actual_revision := cur;
          ELSIF side_streams[i] IS NOT NULL AND side_expected[i] <> side_cur THEN
            outcome := 'conflict'; conflict_stream := side_streams[i]; actual_revision := side_cur;
          ELSE
            first := nextval('events_seq');
            IF n + sn > 1 THEN PERFORM setval('events_seq', first + n + sn - 1); END IF;
            INSERT INTO events (position, stream, revision, type, data, metadata, created)
            SELECT first + g - 1,
                   CASE WHEN g <= n THEN streams[i] ELSE side_streams[i] END,
                   CASE WHEN g <= n THEN cur + g ELSE side_cur + g - n END,
                   types[offs + g], datas[offs + g], metadatas[offs + g], recorded
            FROM generate_series(1, n + sn) AS g;
            last_position := first + n + sn - 1;
            next_revision := cur + n;
            IF side_streams[i] IS NOT NULL THEN side_revision := side_cur + sn; END IF;
          END IF;
          offs := offs + n + sn;
          RETURN NEXT;
        END LOOP;
      END
      $$;
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

/**
 * Brings the schema to SCHEMA_VERSION; safe to run from several nodes at once. The pool's own
 * statement timeout does not apply: a migration waits for another node's up to
 * MIGRATION_LOCK_TIMEOUT and then runs as long as its statements take.
 */
export async function migrate(pool: Pool): Promise<MigrationResult> {
  const prelude = `SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = '${MIGRATION_LOCK_TIMEOUT}'; SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}, hashtext(current_schema()))`;
  return transaction(pool, prelude, async (client) => {
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
