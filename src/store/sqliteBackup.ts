// `cli store backup`: a consistent copy of an embedded store's file while the service runs, with
// SQLite's online backup API (better-sqlite3's db.backup).
//
// The copy goes a slice of pages at a time, so that progress can be told. When another connection
// (the running service) commits meanwhile, SQLite starts the copy over; seen once, the rest is
// copied in one step, which reads a single snapshot (WAL: the service goes on appending) and so
// cannot be started over again. The copy is written beside the target and renamed onto it once
// whole, so a target never holds half a copy.
import Database from 'better-sqlite3';
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A backup that was not started: the message says why, in one line. */
export class BackupRefusedError extends Error {
  override readonly name = 'BackupRefusedError';
}

export interface BackupOptions {
  /** Replace an existing target. */
  force?: boolean;
  /** Pages copied per step; 1024 unless set. */
  pagesPerStep?: number;
  /** Told after each step. */
  onProgress?: (progress: { copiedPages: number; totalPages: number }) => void;
}

export interface BackupResult {
  file: string;
  bytes: number;
  /** The newest position in the copy. */
  head: number;
}

/** better-sqlite3 takes at most this many pages per step: everything that is left. */
const ALL_PAGES = 0x7fffffff;
const FILE_MODE = 0o600;

/** A database file and the -wal and -shm files SQLite keeps beside it. */
function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } catch {
    // A directory some file systems cannot fsync: the rename is as durable as they make it.
  } finally {
    closeSync(fd);
  }
}

export async function backupSqliteStore(source: string, target: string, options: BackupOptions = {}): Promise<BackupResult> {
  const [from, to] = [resolve(source), resolve(target)];
  if (!existsSync(from)) throw new BackupRefusedError(`${from} does not exist: nothing to back up`);
  if (from === to) throw new BackupRefusedError(`${to} is the store itself: name another file`);
  if (existsSync(to) && !options.force) throw new BackupRefusedError(`${to} exists already: pass --force to replace it`);
  if (!existsSync(dirname(to))) throw new BackupRefusedError(`${dirname(to)} does not exist: create it first`);
  const pagesPerStep = options.pagesPerStep ?? 1024;
  const partial = `${to}.partial`;
  removeDatabaseFiles(partial);
  // Created private first: SQLite keeps the mode of an existing file (the log holds session ids).
  closeSync(openSync(partial, 'w', FILE_MODE));
  const db = new Database(from, { fileMustExist: true, timeout: 5000 });
  try {
    let lastRemaining = Infinity;
    let restarted = false;
    await db.backup(partial, {
      progress: ({ totalPages, remainingPages }) => {
        // Fewer pages left after every step, unless the copy was started over.
        if (remainingPages >= lastRemaining) restarted = true;
        lastRemaining = remainingPages;
        options.onProgress?.({ copiedPages: totalPages - remainingPages, totalPages });
        return restarted ? ALL_PAGES : pagesPerStep;
      },
    });
  } catch (error) {
    removeDatabaseFiles(partial);
    throw error;
  } finally {
    db.close();
  }
  const copy = new Database(partial, { fileMustExist: true });
  let head: number;
  try {
    head = copy.prepare<[], number>('SELECT coalesce(max(position), 0) FROM events').pluck().get()!;
  } finally {
    copy.close(); // the last connection: folds its -wal back into the file and removes it
  }
  syncPath(partial);
  // A -wal left beside the old target would be replayed into the new one.
  removeDatabaseFiles(to);
  renameSync(partial, to);
  syncPath(dirname(to));
  return { file: to, bytes: statSync(to).size, head };
}
