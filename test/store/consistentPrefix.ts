// What a backup of a log that was being appended to must be (test/store/sqliteBackup.int.spec.ts,
// test/cli/store.e2e.spec.ts).
import Database from 'better-sqlite3';
import * as assert from 'uvu/assert';

/**
 * A whole file, positions 1..head without a gap, every stream's revisions 0..n, and no append of
 * test/store/fixtures/append-until-stopped.ts (two events each) cut in half. Returns the head.
 */
export function assertConsistentPrefix(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    assert.equal(db.prepare('PRAGMA integrity_check').pluck().all(), ['ok']);
    const { head, count, first } = db
      .prepare<[], { head: number; count: number; first: number }>('SELECT max(position) AS head, count(*) AS count, min(position) AS first FROM events')
      .get()!;
    assert.is(first, 1);
    assert.is(count, head, 'positions run 1..head without a gap');
    const broken = db.prepare('SELECT stream FROM events GROUP BY stream HAVING min(revision) <> 0 OR max(revision) <> count(*) - 1').pluck().all();
    assert.equal(broken, [], 'every stream runs 0..n');
    // The appender writes two events per append: a copy that cut one in half shows an odd count.
    const halves = db.prepare("SELECT stream FROM events WHERE stream LIKE 'running-%' GROUP BY stream HAVING count(*) % 2 <> 0").pluck().all();
    assert.equal(halves, [], 'no append is cut in half');
    return head;
  } finally {
    db.close();
  }
}
