// Child processes for the bench: every server and every load generator runs in its own process,
// started with `node --import tsx <file>` so that the pid we sample is the Node process itself.
//
// A child announces itself with one stdout line `READY <json>` (servers) and ends a job with one
// line `RESULT <json>` (load generators); everything else it prints goes to our stderr.
import { spawn, type ChildProcess, type Serializable } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
export const ROOT_DIR = fileURLToPath(new URL('../..', import.meta.url));

const benchStarted = performance.now();
export const log = (...parts: unknown[]) => process.stderr.write(`[bench ${((performance.now() - benchStarted) / 1000).toFixed(1).padStart(5)}s] ${parts.join(' ')}\n`);

// Payloads are JSON a bench script of ours printed or sent: the caller names the shape that
// script announces (`startChild<Ready>`, `nextResult<Result>`, `message<Message>`).
export interface Child<Ready = unknown> {
  name: string;
  process: ChildProcess;
  pid: number;
  /** The `READY` payload. */
  ready: Promise<Ready>;
  /** Resolves with the next `RESULT` payload. */
  nextResult<Result = unknown>(): Promise<Result>;
  /** Sends an IPC message (children started with `ipc: true`). */
  send(message: Serializable): void;
  /** Resolves with the next IPC message matching `type`. */
  message<Message = unknown>(type: string): Promise<Message>;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  args?: string[];
  ipc?: boolean;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
  /** Ms to wait for READY before failing. */
  readyTimeoutMs?: number;
  /** Whether the child announces READY at all (load generators do not). */
  expectReady?: boolean;
  /** Told each other line of its stdout (also passed on to our stderr). */
  onLine?: (line: string) => void;
  /** A command that execs node in the same process (e.g. `prlimit --nofile=N:N`), so `pid` stays the node's. */
  launcher?: string[];
}

/** An IPC message from a child: an object with a `type` (or whatever else it sent). */
type IpcMessage = { type?: unknown } | null | undefined;

/** Children still running: a run that exits early (interrupted, failed) takes them with it. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export function startChild<Ready = unknown>(name: string, script: string, options: StartOptions = {}): Child<Ready> {
  const [command, ...launcherArgs] = [...(options.launcher ?? []), process.execPath];
  const child = spawn(command!, [...launcherArgs, ...(options.nodeFlags ?? []), '--import', 'tsx', script, ...(options.args ?? [])], {
    cwd: ROOT_DIR,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const results: unknown[] = [];
  const resultWaiters: Array<(value: unknown) => void> = [];
  const messages: IpcMessage[] = [];
  const messageWaiters: Array<{ type: string; resolve(value: IpcMessage): void; reject(error: Error): void }> = [];
  let readyResolve!: (value: Ready) => void;
  let readyReject!: (error: Error) => void;
  const ready = new Promise<Ready>((resolve, reject) => {
    readyResolve = resolve;
    readyReject = reject;
  });
  ready.catch(() => undefined);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      const error = new Error(`${name} exited (${code ?? signal}) before it was done`);
      readyReject(error);
      for (const waiter of messageWaiters.splice(0)) waiter.reject(error);
      resolve(code);
    });
  });
  const readyTimer = setTimeout(() => readyReject(new Error(`${name} did not become ready in time`)), options.readyTimeoutMs ?? 60_000);
  readyTimer.unref();
  if (options.expectReady === false) clearTimeout(readyTimer);

  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('READY ')) {
      clearTimeout(readyTimer);
      readyResolve(JSON.parse(line.slice(6)) as Ready);
    } else if (line.startsWith('RESULT ')) {
      const value: unknown = JSON.parse(line.slice(7));
      const waiter = resultWaiters.shift();
      if (waiter) waiter(value);
      else results.push(value);
    } else if (line.trim()) {
      options.onLine?.(line);
      process.stderr.write(`  [${name}] ${line}\n`);
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => process.stderr.write(`  [${name}!] ${line}\n`));
  child.on('message', (message: IpcMessage) => {
    const index = messageWaiters.findIndex((w) => w.type === message?.type);
    if (index >= 0) messageWaiters.splice(index, 1)[0]!.resolve(message);
    else messages.push(message);
  });

  return {
    name,
    process: child,
    pid: child.pid!,
    ready,
    exited,
    nextResult<Result>() {
      if (results.length > 0) return Promise.resolve(results.shift() as Result);
      if (exitCode !== undefined) return Promise.reject(new Error(`${name} exited before its result`));
      return new Promise<Result>((resolve, reject) => {
        resultWaiters.push((value) => resolve(value as Result));
        void exited.then(() => reject(new Error(`${name} exited before its result`)));
      });
    },
    send(message) {
      child.send!(message);
    },
    message<Message>(type: string) {
      const index = messages.findIndex((m) => m?.type === type);
      if (index >= 0) return Promise.resolve(messages.splice(index, 1)[0] as Message);
      if (exitCode !== undefined) return Promise.reject(new Error(`${name} exited before "${type}"`));
      return new Promise<Message>((resolve, reject) => messageWaiters.push({ type, resolve: (value) => resolve(value as Message), reject }));
    },
    async stop(graceMs = 5000) {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs a child to completion and returns its single RESULT. */
export async function runToResult<Result>(name: string, script: string, options: StartOptions = {}): Promise<Result> {
  const child = startChild(name, script, { ...options, expectReady: false });
  try {
    const result = await child.nextResult<Result>();
    await child.exited;
    return result;
  } finally {
    await child.stop();
  }
}

/** VmRSS and VmHWM of a process in KiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rssKb: number; hwmKb: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

/**
 * Samples a process's RSS every `everyMs`. `rest` is taken when asked (the process idle, before
 * the load); `peak` is the largest of the samples and the kernel's own high-water mark.
 */
export class MemorySampler {
  private timer: NodeJS.Timeout | undefined;
  private peakKb = 0;
  restKb = NaN;

  constructor(
    private readonly pid: number,
    private readonly everyMs = 100,
  ) {}

  markRest(): number {
    this.restKb = this.sample();
    return this.restKb;
  }

  start(): this {
    this.timer = setInterval(() => this.sample(), this.everyMs);
    this.timer.unref();
    return this;
  }

  sample(): number {
    try {
      const { rssKb, hwmKb } = memoryOf(this.pid);
      if (Number.isFinite(rssKb)) this.peakKb = Math.max(this.peakKb, rssKb, Number.isFinite(hwmKb) ? hwmKb : 0);
      return rssKb;
    } catch {
      return NaN; // the process is gone
    }
  }

  stop(): { restMb: number; peakMb: number } {
    this.sample();
    clearInterval(this.timer);
    return { restMb: round(this.restKb / 1024, 1), peakMb: round(this.peakKb / 1024, 1) };
  }
}

export const round = (value: number, digits = 0) => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Share of CPU time the whole machine spent idle over `ms` (from /proc/stat). */
export async function machineIdle(ms = 1000): Promise<number> {
  const read = () => {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3]! + (fields[4] ?? 0);
    return { idle, total: fields.reduce((a, b) => a + b, 0) };
  };
  const a = read();
  await sleep(ms);
  const b = read();
  return (b.idle - a.idle) / Math.max(1, b.total - a.total);
}

/**
 * Waits (at most `maxS`) until the machine has been at least `threshold` idle over a 2 s window:
 * other work on a shared machine only ever slows a scenario down. Resolves with the last reading.
 */
export async function waitForQuiet(maxS: number, threshold = 0.85): Promise<number> {
  const deadline = performance.now() + maxS * 1000;
  for (;;) {
    const idle = await machineIdle(2000);
    if (idle >= threshold || performance.now() > deadline) return idle;
    log(`machine only ${Math.round(idle * 100)}% idle; waiting for it to quieten…`);
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number, thread?: number): number {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return NaN;
  }
}

/** CPU used by a set of processes between start() and stop(), in seconds per process name. */
export class CpuMeter {
  private readonly started = new Map<string, number>();
  constructor(private readonly pids: Record<string, number>) {}
  start(): this {
    for (const [name, pid] of Object.entries(this.pids)) this.started.set(name, cpuSecondsOf(pid));
    return this;
  }
  stop(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.pids).map(([name, pid]) => [name, cpuSecondsOf(pid) - this.started.get(name)!]));
  }
}

/**
 * How much CPU processes outside this run used, so a figure taken on a shared machine says how
 * much it was disturbed: machine-wide busy time (/proc/stat) minus this process and its waited-for
 * children (/proc/self/stat utime, stime, cutime, cstime) minus the live `extraPids`.
 */
export class OthersMeter {
  private readonly start: { busyS: number; oursS: number };
  private readonly startedAt = performance.now();

  /** `extraSeconds`: CPU seconds so far of processes of this run that are not its children (a database server). */
  constructor(
    private readonly extraPids: () => number[] = () => [],
    private readonly extraSeconds: () => number = () => 0,
  ) {
    this.start = this.read();
  }

  private read() {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const busy = cpu.reduce((a, b) => a + b, 0) - cpu[3]! - (cpu[4] ?? 0);
    const self = readFileSync('/proc/self/stat', 'utf8');
    const f = self
      .slice(self.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const ours = (f[11]! + f[12]! + f[13]! + f[14]!) / 100 + this.extraPids().reduce((a, pid) => a + (cpuSecondsOf(pid) || 0), 0) + this.extraSeconds();
    return { busyS: busy / 100, oursS: ours };
  }

  /** Average number of cores other processes kept busy since construction. */
  stop(): number {
    const end = this.read();
    const seconds = (performance.now() - this.startedAt) / 1000;
    return Math.max(0, end.busyS - this.start.busyS - (end.oursS - this.start.oursS)) / seconds;
  }
}
