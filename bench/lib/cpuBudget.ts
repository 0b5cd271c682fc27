// A CPU budget for one process and its threads, as a machine of its own would bound it: a cgroup
// with a CFS quota (`cpu.max` on cgroup v2, `cpu.cfs_quota_us` on v1's cpu controller). The
// process is started inside it by a launcher that moves its own shell there and then execs the
// command, so every thread the process ever makes (V8's helpers, libuv's pool) counts against the
// budget. Needs a writable cgroup hierarchy with the cpu controller (root, no container that
// hides it); `cpuBudgetUnavailable` says why not otherwise.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Short periods: a throttled node waits at most a period's unused part, not 100 ms. */
const PERIOD_US = 10_000;

interface Hierarchy {
  /** The directory new groups go under. */
  root: string;
  version: 1 | 2;
}

function hierarchy(): Hierarchy | string {
  // v1: the cpu controller mounted on a hierarchy of its own.
  if (existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')) return { root: '/sys/fs/cgroup/cpu', version: 1 };
  for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
    const controllers = join(root, 'cgroup.controllers');
    if (!existsSync(controllers)) continue;
    if (!readFileSync(controllers, 'utf8').split(/\s+/).includes('cpu')) continue;
    try {
      writeFileSync(join(root, 'cgroup.subtree_control'), '+cpu');
    } catch (error) {
      return `cgroup v2 at ${root} does not let the cpu controller be enabled for its children (${(error as Error).message})`;
    }
    return { root, version: 2 };
  }
  return 'no cgroup hierarchy with the cpu controller (neither /sys/fs/cgroup/cpu nor a cgroup v2 root offering cpu)';
}

/** Why budgets cannot be set on this machine, or undefined when they can. */
export function cpuBudgetUnavailable(): string | undefined {
  const found = hierarchy();
  if (typeof found === 'string') return found;
  const probe = join(found.root, `bench-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return undefined;
  } catch (error) {
    return `cannot make a cgroup under ${found.root} (${(error as Error).message})`;
  }
}

export interface CpuBudget {
  /** Put before the command: `sh -c 'echo $$ > <group>/cgroup.procs && exec "$@"'`. */
  launcher: string[];
  /** Periods in which the group ran out of its quota, and the time it was held back. */
  throttled(): { periods: number; throttledS: number };
  /** Removes the group (its processes must have exited). */
  remove(): void;
}

/** A fresh group holding its processes to `cores` (0.25: a quarter of one core). */
export function cpuBudget(name: string, cores: number): CpuBudget {
  const found = hierarchy();
  if (typeof found === 'string') throw new Error(found);
  const dir = join(found.root, `bench-${name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const quotaUs = Math.max(1_000, Math.round(cores * PERIOD_US));
  if (found.version === 1) {
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
  } else {
    writeFileSync(join(dir, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
  }
  const stat = () =>
    Object.fromEntries(
      readFileSync(join(dir, 'cpu.stat'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' ') as [string, string]),
    );
  return {
    launcher: ['sh', '-c', 'echo $$ > "$0" && exec "$@"', join(dir, 'cgroup.procs')],
    throttled() {
      const s = stat();
      // v1 counts nanoseconds (throttled_time), v2 microseconds (throttled_usec).
      return { periods: Number(s.nr_throttled ?? 0), throttledS: s.throttled_usec !== undefined ? Number(s.throttled_usec) / 1e6 : Number(s.throttled_time ?? 0) / 1e9 };
    },
    remove() {
      try {
        rmdirSync(dir);
      } catch {
        // A process still inside (a node that did not exit): the group stays until it does.
      }
    },
  };
}
