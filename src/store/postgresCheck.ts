// `cli store check` and `cli store migrate` on PostgreSQL, while the service runs or not. The
// check reads one snapshot (REPEATABLE READ, read only):
//
// - The schema version is the one this build uses (else: migrate, or a newer build).
// - The position sequence is not below the head, so no position is handed out twice.
// - Each stream's revisions run 0..n-1 without a gap, and its positions rise with its revisions.
// - Positions rise with the appending transactions' ids (events.tx): followers rely on it.
//   One pass over the whole table each, so the check's statements are not bound by the
//   statement timeout: it takes as long as the table takes (an operator stops it with Ctrl-C).
//
// Not checked: that global positions have no gaps (rolled-back appends and deleted streams leave
// them, legitimately). Damage to the files themselves is the server's to find (amcheck, its logs).
import { postgresFailureReason } from './postgresConnection.js';
import { openPool } from './postgresPool.js';
import { migrate, SCHEMA_VERSION, schemaVersion, type MigrationResult } from './postgresSchema.js';
import { transaction } from './postgresTransaction.js';

/** Problems are reported this many at most per check. */
const MAX_REPORTED = 20;

/** The problems found, one line each; [] when there are none. */
export async function checkPostgresStore(connectionString: string): Promise<string[]> {
  const { pool } = openPool(connectionString, { max: 1, unbounded: true });
  try {
    return await transaction(pool, 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL statement_timeout = 0', async (client) => {
      const version = await schemaVersion(client);
      if (version === 0) return ['holds no schema of this service: run `store migrate` (a node also makes it when it starts)'];
      if (version < SCHEMA_VERSION) return [`the schema is at version ${version}, this build uses ${SCHEMA_VERSION}: run \`store migrate\``];
      if (version > SCHEMA_VERSION) return [`the schema is at version ${version}, newer than this build knows (${SCHEMA_VERSION}): check it with a build at least as new`];
      const problems: string[] = [];
      const sequence = await client.query<{ head: number; drawn: number }>(
        'SELECT (SELECT coalesce(max(position), 0) FROM events) AS head, (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM events_seq) AS drawn',
      );
      const { head, drawn } = sequence.rows[0]!;
      if (drawn < head) problems.push(`the position sequence (events_seq) is at ${drawn}, below the head ${head}: positions would be handed out twice`);
      const revisions = await client.query<{ stream: string; n: number; lo: number; hi: number }>(
        `SELECT stream, count(*)::int AS n, min(revision) AS lo, max(revision) AS hi FROM events GROUP BY stream
         HAVING min(revision) <> 0 OR max(revision) <> count(*) - 1 LIMIT ${MAX_REPORTED}`,
      );
      for (const { stream, n, lo, hi } of revisions.rows) problems.push(`stream ${stream} holds ${n} events with revisions ${lo}..${hi}, not 0..${n - 1}`);
      const positions = await client.query<{ stream: string; revision: number }>(
        `SELECT stream, revision FROM (SELECT stream, revision, position, lag(position) OVER (PARTITION BY stream ORDER BY revision) AS previous FROM events) AS e
         WHERE previous > position LIMIT ${MAX_REPORTED}`,
      );
      for (const { stream, revision } of positions.rows) problems.push(`stream ${stream}: revision ${revision} has a lower position than revision ${revision - 1}`);
      const order = await client.query<{ position: number }>(
        `SELECT position FROM (SELECT position, tx, lag(tx) OVER (ORDER BY position) AS previous FROM events) AS e WHERE previous > tx LIMIT ${MAX_REPORTED}`,
      );
      for (const { position } of order.rows) {
        problems.push(`position ${position} was appended by an older transaction than the position before it (written outside append_batch?): a follower may have read past it`);
      }
      return problems;
    });
  } catch (error) {
    return [`cannot be checked: ${postgresFailureReason(error)}`];
  } finally {
    await pool.end();
  }
}

/** Brings the schema to this build's version (what a node does when it starts); rejects with one line. */
export async function migratePostgresStore(connectionString: string): Promise<MigrationResult> {
  const { pool } = openPool(connectionString, { max: 1, unbounded: true });
  try {
    return await migrate(pool);
  } catch (error) {
    throw new Error(postgresFailureReason(error), { cause: error });
  } finally {
    await pool.end();
  }
}
