// The default caps on sockets and realtime connections per node come from the process's
// open-files limit: every socket holds a descriptor, and the store, the platform client and the
// log need some too; below the sockets' cap, the streams' leaves sockets for the admin API.
import { readFileSync } from 'node:fs';

/** Used where the limit cannot be read (not Linux) or is unlimited. */
const FALLBACK_MAX_CONNECTIONS = 10_000;
const FALLBACK_MAX_SOCKETS = 11_000;

/** This process's limits as Linux tells them (/proc/self/limits), or undefined elsewhere. */
function ownLimits(): string | undefined {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
}

/** The soft `Max open files` of this process (Linux /proc), or undefined. */
export function openFilesSoftLimit(limitsText?: string): number | undefined {
  const text = limitsText ?? ownLimits();
  if (text === undefined) return undefined;
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

/** The soft and hard `Max open files` of this process (Linux /proc), or undefined. */
export function openFilesLimits(limitsText?: string): { soft: number; hard: number } | undefined {
  const text = limitsText ?? ownLimits();
  if (text === undefined) return undefined;
  const match = /^Max open files\s+(\d+)\s+(\d+)\s/m.exec(text);
  return match ? { soft: Number(match[1]), hard: Number(match[2]) } : undefined;
}

/**
 * The one line a node logs at start about its descriptors: what the caps it runs with need, and
 * what to raise for more. Node raises its own soft limit to the hard one as it starts; nothing in
 * a process can raise the hard one, only what starts it. `short` is true when a cap given in the
 * environment is at or above the limit: sockets past it would fail to open (EMFILE).
 */
export function describeOpenFiles(limits: { soft: number; hard: number } | undefined, caps: { streams: number; sockets: number }): { short: boolean; line: string } {
  const raise = 'raise the hard open-files limit of what starts the node (systemd LimitNOFILE=, docker --ulimit nofile=N:N, ulimit -Hn as root)';
  if (limits === undefined) return { short: false, line: `open-files limit unknown: at most ${caps.streams} realtime streams and ${caps.sockets} sockets` };
  const short = caps.sockets >= limits.soft;
  return {
    short,
    line:
      `open-files limit ${limits.soft} (hard ${limits.hard}): at most ${caps.streams} realtime streams and ${caps.sockets} sockets` +
      (short ? `, more than the limit leaves room for; ${raise} above ${caps.sockets}` : `; to hold more, ${raise}`),
  };
}
