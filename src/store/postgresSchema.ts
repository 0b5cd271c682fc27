// The PostgreSQL adapter's tables, and the migrations that make them. Each migration runs once,
// in order, and is recorded in schema_version with the rest of its transaction (PostgreSQL's DDL
// is transactional: a migration is applied whole or not at all). Several nodes starting at once
// queue on an advisory lock: the first migrates, the others find the schema current.
//
// The tables are created in the connection's current schema (search_path), so a database can
// hold several deployments, one schema each (`options=-c search_path=…` in the connection string).
//
// - events: one row per event. `position` is the global position, drawn from the sequence
//   events_seq only inside append_batch while it holds its schema's order lock; `tx` is the
//   appending transaction's id, drawn under the same lock, so positions and ids rise together
//   and readers can tell which rows nothing can still commit below (postgres.ts, FINISHED). The
//   unique (stream, revision) constraint is the last concurrency guard. data and metadata are
//   `json`, which keeps the text as written (jsonb would reorder keys).
// - append_batch(...): one statement appends a whole batch of a node's appends (postgresAppender.ts).
//   It holds the order lock (session level) only while it draws the transaction id, the clock
//   and the positions, and always lets it go before it returns: never through the commit, never
//   across a client round trip; batches judge and insert their rows in parallel. Each stream it
//   may write is locked (transaction level, taken in one order) until its commit, so a later
//   batch that writes or checks the same stream judges it on committed rows.
// - nodes: each process's last heartbeat, one row per instance (EventStore.beat).
//
// Advisory locks are per database: their keys include a hash of the schema's name, so two
// deployments in separate schemas never wait for each other.
import type { ClientBase, Pool } from 'pg';
import { transaction } from './postgresTransaction.js';

/** First key of the advisory locks (pg_advisory_lock(int, int)): the append order, migrations. */
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
        recorded timestamptz;
        accepted bool[];
        curs int[];
        side_curs int[];
        offsets int[];
        through int[];
        total int;
        first bigint;
      BEGIN
        -- Held until this statement's commit: positions are drawn and committed in one order.
        PERFORM pg_advisory_xact_lock(${APPEND_LOCK}, hashtext(current_schema()));
        recorded := clock_timestamp();
        -- Each append judged on its streams' last revisions, read once for the batch (a stream is
        -- in one append of a batch at most). expected: -2 any revision, -1 no stream, else the
        -- stream's last revision. offsets: the append's first row in the input; through: the rows
        -- accepted up to and including this append.
        WITH a AS (
          SELECT * FROM unnest(streams, expected, side_streams, side_expected, counts, side_counts)
            WITH ORDINALITY AS a(stream, expected, side_stream, side_expected, n, sn, i)
        ), last AS (
          SELECT ev.stream, max(ev.revision) AS revision FROM events ev WHERE ev.stream = ANY (streams || side_streams) GROUP BY ev.stream
        ), judged AS (
          SELECT a.i, a.n, a.sn, coalesce(l.revision, -1) AS cur, coalesce(sl.revision, -1) AS side_cur,
            (a.expected = -2 OR a.expected = coalesce(l.revision, -1)) AND (a.side_stream IS NULL OR a.side_expected = coalesce(sl.revision, -1)) AS ok,
            (sum(a.n + a.sn) OVER (ORDER BY a.i) - a.n - a.sn)::int AS offs
          FROM a LEFT JOIN last l ON l.stream = a.stream LEFT JOIN last sl ON sl.stream = a.side_stream
        )
        SELECT array_agg(j.ok ORDER BY j.i), array_agg(j.cur ORDER BY j.i), array_agg(j.side_cur ORDER BY j.i), array_agg(j.offs ORDER BY j.i),
               array_agg(j.through ORDER BY j.i)
        INTO accepted, curs, side_curs, offsets, through
        FROM (SELECT judged.*, (sum(CASE WHEN judged.ok THEN judged.n + judged.sn ELSE 0 END) OVER (ORDER BY judged.i))::int AS through FROM judged) AS j;
        total := coalesce(through[array_length(through, 1)], 0);
        IF total > 0 THEN
          first := nextval('events_seq');
          IF total > 1 THEN PERFORM setval('events_seq', first + total - 1); END IF;
          INSERT INTO events (position, stream, revision, type, data, metadata, created)
          SELECT first + x.through - x.n - x.sn + g - 1,
                 CASE WHEN g <= x.n THEN x.stream ELSE x.side_stream END,
                 CASE WHEN g <= x.n THEN x.cur + g ELSE x.side_cur + g - x.n END,
                 src.type, src.data, src.metadata, recorded
          FROM unnest(streams, side_streams, counts, side_counts, accepted, curs, side_curs, offsets, through)
                 AS x(stream, side_stream, n, sn, ok, cur, side_cur, offs, through)
          CROSS JOIN LATERAL generate_series(1, x.n + x.sn) AS g
          JOIN unnest(types, datas, metadatas) WITH ORDINALITY AS src(type, data, metadata, at) ON src.at = x.offs + g
          WHERE x.ok;
        END IF;
        RETURN QUERY
        SELECT CASE WHEN x.ok THEN 'ok' ELSE 'conflict' END,
               CASE WHEN x.ok THEN NULL WHEN x.expected <> -2 AND x.expected <> x.cur THEN x.stream ELSE x.side_stream END,
               CASE WHEN x.ok THEN NULL WHEN x.expected <> -2 AND x.expected <> x.cur THEN x.cur ELSE x.side_cur END,
               CASE WHEN x.ok THEN first + x.through - 1 END,
               CASE WHEN x.ok THEN x.cur + x.n END,
               CASE WHEN x.ok AND x.side_stream IS NOT NULL THEN x.side_cur + x.sn END
        FROM unnest(streams, expected, side_streams, counts, side_counts, accepted, curs, side_curs, through)
               WITH ORDINALITY AS x(stream, expected, side_stream, n, sn, ok, cur, side_cur, through, i)
        ORDER BY x.i;
      END
      $$;
    `,
  },
  {
    version: 3,
    description: 'the append lock held while positions and transaction ids are drawn, not through the commit; events.tx; stream locks',
    // Existing rows are committed: tx 0 sorts below every live transaction id. Rows written
    // outside append_batch get their own transaction's id, so they wait like any other.
    sql: `
      ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT '0';
      ALTER TABLE events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
      CREATE OR REPLACE FUNCTION append_batch(
        streams text[], expected int[], side_streams text[], side_expected int[], counts int[], side_counts int[],
        types text[], datas json[], metadatas json[]
      ) RETURNS TABLE (outcome text, conflict_stream text, actual_revision int, last_position bigint, next_revision int, side_revision int)
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        recorded timestamptz;
        accepted bool[];
        curs int[];
        side_curs int[];
        offsets int[];
        through int[];
        total int;
        first bigint;
        me xid8;
        seed bigint := hashtext(current_schema());
      BEGIN
        -- This transaction's id must be drawn under the order lock, like its positions: one drawn
        -- before could be lower than the id of a batch that took the lock earlier.
        IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
          RAISE EXCEPTION 'append_batch must be the first write of its transaction' USING ERRCODE = 'invalid_transaction_state';
        END IF;
        BEGIN
          -- The order lock, at session level: released below, before the commit and its WAL
          -- flush, so other nodes' batches commit alongside this one.
          PERFORM pg_advisory_lock(${APPEND_LOCK}, hashtext(current_schema()));
          me := pg_current_xact_id();
          -- A lock per stream this batch may write, held to the commit: a batch that writes or
          -- checks one of them later waits here for this one to commit, then judges on its rows.
          PERFORM pg_advisory_xact_lock(hashtextextended(s, seed)) FROM unnest(streams) AS s;
          PERFORM pg_advisory_xact_lock(hashtextextended(x.s, seed)) FROM unnest(side_streams, side_counts) AS x(s, n) WHERE x.s IS NOT NULL AND x.n > 0;
          -- A stream only checked (alongside with no events) gets no row the unique index could
          -- fence: wait out any batch still committing a write to it, and hold nothing.
          PERFORM pg_advisory_lock_shared(hashtextextended(x.s, seed)) FROM unnest(side_streams, side_counts) AS x(s, n) WHERE x.s IS NOT NULL AND x.n = 0;
          PERFORM pg_advisory_unlock_shared(hashtextextended(x.s, seed)) FROM unnest(side_streams, side_counts) AS x(s, n) WHERE x.s IS NOT NULL AND x.n = 0;
          recorded := clock_timestamp();
          -- Each append judged on its streams' last revisions, read once for the batch (a stream is
          -- in one append of a batch at most). expected: -2 any revision, -1 no stream, else the
          -- stream's last revision. offsets: the append's first row in the input; through: the rows
          -- accepted up to and including this append.
          WITH a AS (
            SELECT * FROM unnest(streams, expected, side_streams, side_expected, counts, side_counts)
              WITH ORDINALITY AS a(stream, expected, side_stream, side_expected, n, sn, i)
          ), last AS (
            -- One index entry per stream (the newest revision), however long the stream is.
            SELECT u.stream, (SELECT ev.revision FROM events ev WHERE ev.stream = u.stream ORDER BY ev.revision DESC LIMIT 1) AS revision
            FROM (SELECT DISTINCT x FROM unnest(streams || side_streams) AS x WHERE x IS NOT NULL) AS u(stream)
          ), judged AS (
            SELECT a.i, a.n, a.sn, coalesce(l.revision, -1) AS cur, coalesce(sl.revision, -1) AS side_cur,
              (a.expected = -2 OR a.expected = coalesce(l.revision, -1)) AND (a.side_stream IS NULL OR a.side_expected = coalesce(sl.revision, -1)) AS ok,
              (sum(a.n + a.sn) OVER (ORDER BY a.i) - a.n - a.sn)::int AS offs
            FROM a LEFT JOIN last l ON l.stream = a.stream LEFT JOIN last sl ON sl.stream = a.side_stream
          )
          SELECT array_agg(j.ok ORDER BY j.i), array_agg(j.cur ORDER BY j.i), array_agg(j.side_cur ORDER BY j.i), array_agg(j.offs ORDER BY j.i),
                 array_agg(j.through ORDER BY j.i)
          INTO accepted, curs, side_curs, offsets, through
          FROM (SELECT judged.*, (sum(CASE WHEN judged.ok THEN judged.n + judged.sn ELSE 0 END) OVER (ORDER BY judged.i))::int AS through FROM judged) AS j;
          total := coalesce(through[array_length(through, 1)], 0);
          IF total > 0 THEN
            first := nextval('events_seq');
            IF total > 1 THEN PERFORM setval('events_seq', first + total - 1); END IF;
            INSERT INTO events (position, stream, revision, type, data, metadata, created, tx)
            SELECT first + x.through - x.n - x.sn + g - 1,
                   CASE WHEN g <= x.n THEN x.stream ELSE x.side_stream END,
                   CASE WHEN g <= x.n THEN x.cur + g ELSE x.side_cur + g - x.n END,
                   src.type, src.data, src.metadata, recorded, me
            FROM unnest(streams, side_streams, counts, side_counts, accepted, curs, side_curs, offsets, through)
                   AS x(stream, side_stream, n, sn, ok, cur, side_cur, offs, through)
            CROSS JOIN LATERAL generate_series(1, x.n + x.sn) AS g
            JOIN unnest(types, datas, metadatas) WITH ORDINALITY AS src(type, data, metadata, at) ON src.at = x.offs + g
            WHERE x.ok;
          END IF;
          PERFORM pg_advisory_unlock(${APPEND_LOCK}, hashtext(current_schema()));
        EXCEPTION WHEN OTHERS OR query_canceled THEN
          -- A pooled connection must never keep a session lock past a failed statement.
          PERFORM pg_advisory_unlock_all();
          RAISE;
        END;
        RETURN QUERY
        SELECT CASE WHEN x.ok THEN 'ok' ELSE 'conflict' END,
               CASE WHEN x.ok THEN NULL WHEN x.expected <> -2 AND x.expected <> x.cur THEN x.stream ELSE x.side_stream END,
               CASE WHEN x.ok THEN NULL WHEN x.expected <> -2 AND x.expected <> x.cur THEN x.cur ELSE x.side_cur END,
               CASE WHEN x.ok THEN first + x.through - 1 END,
               CASE WHEN x.ok THEN x.cur + x.n END,
               CASE WHEN x.ok AND x.side_stream IS NOT NULL THEN x.side_cur + x.sn END
        FROM unnest(streams, expected, side_streams, counts, side_counts, accepted, curs, side_curs, through)
               WITH ORDINALITY AS x(stream, expected, side_stream, n, sn, ok, cur, side_cur, through, i)
        ORDER BY x.i;
      END
      $$;
    `,
  },
  {
    version: 4,
    description: 'append_batch: stream locks and judging before the order lock, rows inserted after it',
    // The order lock covers only what must be drawn together (the transaction id, the clock, the
    // positions): batches of other nodes judge and insert in parallel. Stream locks are taken in
    // one order (by key) before it, so two batches never wait on each other in a cycle.
    sql: `
      CREATE OR REPLACE FUNCTION append_batch(
        streams text[], expected int[], side_streams text[], side_expected int[], counts int[], side_counts int[],
        types text[], datas json[], metadatas json[]
      ) RETURNS TABLE (outcome text, conflict_stream text, actual_revision int, last_position bigint, next_revision int, side_revision int)
      LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
      DECLARE
        recorded timestamptz;
        accepted bool[];
        curs int[];
        side_curs int[];
        offsets int[];
        through int[];
        total int;
        first bigint;
        me xid8;
        seed bigint := hashtext(current_schema());
        lock_key bigint;
        exclusive bool;
      BEGIN
        IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
          RAISE EXCEPTION 'append_batch must be the first write of its transaction' USING ERRCODE = 'invalid_transaction_state';
        END IF;
        -- A lock per stream, held to the commit: exclusive for a stream this batch may write, so
        -- a later batch that writes or checks it judges on committed rows; shared for a stream
        -- only checked (alongside with no events), which no row of ours could fence.
        FOR lock_key, exclusive IN
          SELECT k.key, bool_or(k.writes) FROM (
            SELECT hashtextextended(s, seed), true FROM unnest(streams) AS s
            UNION ALL
            SELECT hashtextextended(x.s, seed), x.n > 0 FROM unnest(side_streams, side_counts) AS x(s, n) WHERE x.s IS NOT NULL
          ) AS k(key, writes)
          GROUP BY k.key ORDER BY k.key
        LOOP
          IF exclusive THEN
            PERFORM pg_advisory_xact_lock(lock_key);
          ELSE
            PERFORM pg_advisory_xact_lock_shared(lock_key);
          END IF;
        END LOOP;
        -- Each append judged on its streams' last revisions, read once for the batch (a stream is
        -- in one append of a batch at most). expected: -2 any revision, -1 no stream, else the
        -- stream's last revision. offsets: the append's first row in the input; through: the rows
        -- accepted up to and including this append.
        WITH a AS (
          SELECT * FROM unnest(streams, expected, side_streams, side_expected, counts, side_counts)
            WITH ORDINALITY AS a(stream, expected, side_stream, side_expected, n, sn, i)
        ), last AS (
          -- One index entry per stream (the newest revision), however long the stream is.
          SELECT u.stream, (SELECT ev.revision FROM events ev WHERE ev.stream = u.stream ORDER BY ev.revision DESC LIMIT 1) AS revision
          FROM (SELECT DISTINCT x FROM unnest(streams || side_streams) AS x WHERE x IS NOT NULL) AS u(stream)
        ), judged AS (
          SELECT a.i, a.n, a.sn, coalesce(l.revision, -1) AS cur, coalesce(sl.revision, -1) AS side_cur,
            (a.expected = -2 OR a.expected = coalesce(l.revision, -1)) AND (a.side_stream IS NULL OR a.side_expected = coalesce(sl.revision, -1)) AS ok,
            (sum(a.n + a.sn) OVER (ORDER BY a.i) - a.n - a.sn)::int AS offs
          FROM a LEFT JOIN last l ON l.stream = a.stream LEFT JOIN last sl ON sl.stream = a.side_stream
        )
        SELECT array_agg(j.ok ORDER BY j.i), array_agg(j.cur ORDER BY j.i), array_agg(j.side_cur ORDER BY j.i), array_agg(j.offs ORDER BY j.i),
               array_agg(j.through ORDER BY j.i)
        INTO accepted, curs, side_curs, offsets, through
        FROM (SELECT judged.*, (sum(CASE WHEN judged.ok THEN judged.n + judged.sn ELSE 0 END) OVER (ORDER BY judged.i))::int AS through FROM judged) AS j;
        total := coalesce(through[array_length(through, 1)], 0);
        IF total > 0 THEN
          BEGIN
            -- The order lock, at session level, only while the transaction id, the clock and the
            -- positions are drawn: a lower position then always has a lower transaction id (and a
            -- time no later), whatever order the batches commit in.
            PERFORM pg_advisory_lock(${APPEND_LOCK}, hashtext(current_schema()));
            me := pg_current_xact_id();
            recorded := clock_timestamp();
            first := nextval('events_seq');
            IF total > 1 THEN PERFORM setval('events_seq', first + total - 1); END IF;
            PERFORM pg_advisory_unlock(${APPEND_LOCK}, hashtext(current_schema()));
          EXCEPTION WHEN OTHERS OR query_canceled THEN
            -- A pooled connection must never keep a session lock past a failed statement.
            PERFORM pg_advisory_unlock_all();
            RAISE;
          END;
          INSERT INTO events (position, stream, revision, type, data, metadata, created, tx)
          SELECT first + x.through - x.n - x.sn + g - 1,
                 CASE WHEN g <= x.n THEN x.stream ELSE x.side_stream END,
                 CASE WHEN g <= x.n THEN x.cur + g ELSE x.side_cur + g - x.n END,
                 src.type, src.data, src.metadata, recorded, me
          FROM unnest(streams, side_streams, counts, side_counts, accepted, curs, side_curs, offsets, through)
                 AS x(stream, side_stream, n, sn, ok, cur, side_cur, offs, through)
          CROSS JOIN LATERAL generate_series(1, x.n + x.sn) AS g
          JOIN unnest(types, datas, metadatas) WITH ORDINALITY AS src(type, data, metadata, at) ON src.at = x.offs + g
          WHERE x.ok;
        END IF;
        RETURN QUERY
        SELECT CASE WHEN x.ok THEN 'ok' ELSE 'conflict' END,
               CASE WHEN x.ok THEN NULL WHEN x.expected <> -2 AND x.expected <> x.cur THEN x.stream ELSE x.side_stream END,
               CASE WHEN x.ok THEN NULL WHEN x.expected <> -2 AND x.expected <> x.cur THEN x.cur ELSE x.side_cur END,
               CASE WHEN x.ok THEN first + x.through - 1 END,
               CASE WHEN x.ok THEN x.cur + x.n END,
               CASE WHEN x.ok AND x.side_stream IS NOT NULL THEN x.side_cur + x.sn END
        FROM unnest(streams, expected, side_streams, counts, side_counts, accepted, curs, side_curs, through)
               WITH ORDINALITY AS x(stream, expected, side_stream, n, sn, ok, cur, side_cur, through, i)
        ORDER BY x.i;
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
