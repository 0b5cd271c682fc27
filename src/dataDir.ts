// DATA_DIR holds the event log (session ids, user profiles, the audit trail) and the generated
// session secret: only the service's own user may read it. The directory is made 0700 and every
// file in it 0600, also when they already exist readable by others. SQLite creates
// its -wal and -shm files with the mode of the database file, so that file is created 0600 first.
import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** A file someone else owns (an operator's CLI run as another user) is left as it is. */
function tighten(path: string, mode: number): void {
  try {
    if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
  } catch (error) {
    if (!['EPERM', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}

export function preparePrivateDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  tighten(dir, DIR_MODE);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) tighten(join(dir, entry.name), FILE_MODE);
  }
}

/** Creates the file empty and private when it is missing. */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, 'a', FILE_MODE));
  tighten(path, FILE_MODE);
}
