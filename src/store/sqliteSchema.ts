// The SQLite adapter's tables, created at open when missing: every statement is idempotent, so a
// file an older version made gets what it lacks and keeps what it has.
//
// - events: the INTEGER PRIMARY KEY is the global position (AUTOINCREMENT: a deleted position is
//   never handed out again) and the unique (stream, revision) index is the concurrency guard.
// - nodes: each process's last heartbeat, one row per instance (EventStore.beat).
import type Database from 'better-sqlite3';

export function createSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS events (
      position INTEGER PRIMARY KEY AUTOINCREMENT,
      stream   TEXT    NOT NULL,
      revision INTEGER NOT NULL,
      type     TEXT    NOT NULL,
      data     TEXT    NOT NULL,
      metadata TEXT,
      created  TEXT    NOT NULL
    );
    CREATE UNIQUE INDEX IF NOT EXISTS events_stream_revision ON events (stream, revision);
    CREATE TABLE IF NOT EXISTS nodes (
      instance TEXT    PRIMARY KEY,
      node     TEXT    NOT NULL,
      started  TEXT    NOT NULL,
      clock_ms INTEGER NOT NULL,
      count    INTEGER NOT NULL
    );
  `);
}
