// The default caps on sockets and realtime connections per node come from the process's
// open-files limit: every socket holds a descriptor, and the store, the platform client and the
// log need some too; below the sockets' cap, the streams' leaves sockets for the admin API.
import { readFileSync } from 'node:fs';

/** Used where the limit cannot be read (not Linux) or is unlimited. */
const FALLBACK_MAX_CONNECTIONS = 10_000;
const FALLBACK_MAX_SOCKETS = 11_000;

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

/**
 * Sockets a node accepts: the soft limit less a twentieth (at least 64) for the store, the
 * platform client and the log. Above the streams' cap by half of what that keeps back.
 */
export function maxSocketsFor(softLimit: number | undefined): number {
  if (softLimit === undefined) return FALLBACK_MAX_SOCKETS;
  return Math.max(2, softLimit - Math.max(64, Math.ceil(softLimit / 20)));
}

export const defaultMaxSockets = () => maxSocketsFor(openFilesSoftLimit());
