// `cli store check`: looks for damage in an embedded store's file, while the service runs or not
// (the checks read one snapshot). What it runs, and what it costs:
//
// - PRAGMA integrity_check: every page, every index against its table. Reads the whole file.
// - Each stream's revisions run 0..n-1 without a gap, and its positions rise with its revisions:
//   one pass over the (stream, revision) index, which holds the position too.
// - The position counter (sqlite_sequence) is not below the head, so no position is handed out
//   twice.
// - The head is not below the position marker (logMarker.ts): no committed events went missing.
//
// Not checked: that global positions have no gaps (deleted streams leave them, legitimately).
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { LogLossError, readMarker } from './logMarker.js';

/** Problems are reported this many at most per check, as integrity_check does. */
const MAX_REPORTED = 20;

/** The problems found in the file, one line each; [] when there are none. */
export function checkSqliteStore(file: string, markerFile?: string): string[] {
  if (!existsSync(file)) return ['the file does not exist'];
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 5000 });
  } catch (error) {
    return [`cannot be opened: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  const check = (what: string, run: () => string[]) => {
    try {
      problems.push(...run());
    } catch (error) {
      problems.push(`${what} failed: ${(error as Error).message}`);
    }
  };
  try {
    check('the integrity check', () =>
      db
        .prepare<[], string>(`PRAGMA integrity_check(${MAX_REPORTED})`)
        .pluck()
        .all()
        .filter((line) => line !== 'ok'),
    );
    let tables: string[] | undefined;
    check('reading the schema', () => {
      tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      return [];
    });
    if (!tables) return problems;
    if (!tables.includes('events')) return [...problems, 'holds no events table: not an event store'];
    check('the revisions check', () =>
      db
        .prepare<[], { stream: string; n: number; lo: number; hi: number }>(
          `SELECT stream, count(*) AS n, min(revision) AS lo, max(revision) AS hi FROM events GROUP BY stream HAVING lo <> 0 OR hi <> n - 1 LIMIT ${MAX_REPORTED}`,
        )
        .all()
        .map(({ stream, n, lo, hi }) => `stream ${stream} holds ${n} events with revisions ${lo}..${hi}, not 0..${n - 1}`),
    );
    check('the positions check', () =>
      db
        .prepare<[], { stream: string; revision: number }>(
          `SELECT stream, revision FROM (SELECT stream, revision, position, lag(position) OVER (PARTITION BY stream ORDER BY revision) AS previous FROM events)
           WHERE previous > position LIMIT ${MAX_REPORTED}`,
        )
        .all()
        .map(({ stream, revision }) => `stream ${stream}: revision ${revision} has a lower position than revision ${revision - 1}`),
    );
    let head = 0;
    check('the position counter check', () => {
      const row = db
        .prepare<[], { head: number; seq: number | null }>("SELECT coalesce(max(position), 0) AS head, (SELECT seq FROM sqlite_sequence WHERE name = 'events') AS seq FROM events")
        .get()!;
      head = row.head;
      return head > 0 && (row.seq ?? 0) < head ? [`the position counter (sqlite_sequence) is at ${row.seq ?? 0}, below the head ${head}: positions may be handed out twice`] : [];
    });
    if (markerFile) {
      check('the position marker check', () => {
        let recorded: number | undefined;
        try {
          recorded = readMarker(markerFile);
        } catch (error) {
          if (error instanceof LogLossError) return [error.message];
          throw error;
        }
        return recorded !== undefined && head < recorded
          ? [`the log ends at position ${head}, below position ${recorded} recorded in ${markerFile}: committed events are missing`]
          : [];
      });
    }
  } finally {
    db.close();
  }
  return problems;
}
