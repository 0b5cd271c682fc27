// `X_FILE=/run/secrets/x` in place of `X`: a secret read from a file (Docker and Kubernetes
// secrets), so it is not in the environment that `ps e`, `docker inspect` and crash reports show.
// Messages name the variable and the path, never what the file holds.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The variables that may come from a file. */
export const SECRET_VARIABLES = [
  'COMMUNITY_KEY',
  'COMMUNITY_KEY_POINT',
  'COMMUNITY_KEY_MEDAL',
  // The deprecated name of COMMUNITY_KEY_MEDAL (config.ts reads it as that).
  'COMMUNITY_KEY_METAL',
  'COMMUNITY_KEY_ITEM',
  'COMMUNITY_KEY_LIVENESS',
  'SESSION_SECRET',
  'EVENTSTORE_CONNECTION_STRING',
] as const;

/** Larger than any key or connection string; a larger file is surely the wrong one. */
export const SECRET_FILE_MAX_BYTES = 64 * 1024;

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
};

export interface SecretFiles {
  /** The environment with each `X_FILE` read into `X` (and `X_FILE` left out). */
  env: Record<string, string | undefined>;
  /** Where each variable read from a file came from: `X` → `X_FILE (path)`. */
  sources: Map<string, string>;
  /** One line per problem, each naming its variable. */
  problems: string[];
}

/** Reads the `*_FILE` variants present in `env`. An empty variable counts as unset, as everywhere. */
export function readSecretFiles(env: Record<string, string | undefined>): SecretFiles {
  const out: Record<string, string | undefined> = { ...env };
  const sources = new Map<string, string>();
  const problems: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const fileVariable = `${name}_FILE`;
    const path = env[fileVariable];
    delete out[fileVariable];
    if (path === undefined || path === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name} and ${fileVariable} are both set: set only one of them`);
      continue;
    }
    const read = readSecretFile(path);
    if (typeof read === 'object') {
      problems.push(`${fileVariable}: ${read.problem}`);
      continue;
    }
    out[name] = read;
    sources.set(name, `${fileVariable} (${path})`);
  }
  return { env: out, sources, problems };
}

/** The file's text without its trailing line breaks, or why it cannot serve as a secret (naming the path). */
function readSecretFile(path: string): string | { problem: string } {
  const unreadable = (error: unknown) => ({ problem: `cannot read ${path}: ${reason(error)}` });
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return unreadable(error);
  }
  try {
    if (fstatSync(fd).isDirectory()) return { problem: `cannot read ${path}: is a directory` };
    // Reading one byte past the bound tells a file that is too large, whatever size it claims (a pipe, /proc).
    const buffer = Buffer.alloc(SECRET_FILE_MAX_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > SECRET_FILE_MAX_BYTES) return { problem: `${path} is larger than ${SECRET_FILE_MAX_BYTES / 1024} KiB` };
    const text = buffer
      .subarray(0, length)
      .toString('utf8')
      .replace(/[\r\n]+$/, '');
    // An empty secret is a mistake in the mount, not a wish to leave the variable unset.
    if (text === '') return { problem: `${path} is empty` };
    return text;
  } catch (error) {
    return unreadable(error);
  } finally {
    closeSync(fd);
  }
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return REASONS[code] ?? (code || 'unreadable');
}
