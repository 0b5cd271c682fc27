// The default cap on realtime connections per node comes from the process's open-files limit:
// every stream holds a socket, and the store, the platform client and the admin API need some too.
import { readFileSync } from 'node:fs';

/** Used where the limit cannot be read (not Linux) or is unlimited. */
const FALLBACK_MAX_CONNECTIONS = 10_000;

/** The soft `Max open files` of this process (Linux /proc), or undefined. */
export function openFilesSoftLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/** Connections a node can hold: the soft limit less a tenth (at least 100) for everything else. */
export function maxConnectionsFor(softLimit: number | undefined): number {
  if (softLimit === undefined) return FALLBACK_MAX_CONNECTIONS;
  return Math.max(1, softLimit - Math.max(100, Math.ceil(softLimit / 10)));
}

export const defaultMaxConnections = () => maxConnectionsFor(openFilesSoftLimit());
