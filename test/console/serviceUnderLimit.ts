// The service as a child process under a small open-files limit (`ulimit -n`), so that a test can
// see what holding many connections does to it: `src/main.ts` as `npm start` runs it from the
// sources, or test/console/liveReloadService.ts as `npm run dev` runs the console. Its
// configuration comes from the environment; everything it writes is kept for the test to read.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { eventually } from '../support/eventually.js';

const root = new URL('../..', import.meta.url).pathname;
const START_TIMEOUT_MS = 30_000;

export const ENTRIES = { start: 'src/main.ts', dev: 'test/console/liveReloadService.ts' } as const;

export interface LimitedService {
  url: string;
  /** The JSON log lines it wrote so far. */
  logLines(): Array<Record<string, unknown>>;
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startUnderLimit(options: {
  entry: keyof typeof ENTRIES;
  openFiles: number;
  dataDir: string;
  communityUrl: string;
  env?: Record<string, string>;
}): Promise<LimitedService> {
  const env = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: options.dataDir,
    COMMUNITY_URL: options.communityUrl,
    COMMUNITY_KEY: SIMULATOR_KEY,
    LOG_LEVEL: 'info',
    ...options.env,
  };
  // The limit is the shell's, inherited by the node it becomes; node and the entry are arguments.
  const child = spawn('sh', ['-c', `ulimit -n ${options.openFiles} && exec "$0" --import tsx "$1"`, process.execPath, ENTRIES[options.entry]], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const logLines = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await gone;
    running.delete(child);
  };
  /** The "listening" log line once written; a process that exited first ends the wait. */
  const listening = () => {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before listening:\n${out}`);
    return logLines().find((line) => line.msg === 'listening');
  };
  const started = await eventually(listening, { what: () => `the service to start:\n${out}`, timeoutMs: START_TIMEOUT_MS }).catch(async (error: Error) => {
    await kill();
    throw error;
  });
  return { url: started.url as string, logLines, kill };
}

export interface HeldRequest {
  /** 0 when no answer came in time (the node could not take the connection). */
  status: number;
  close(): void;
}

/** A GET on a connection of its own, kept open until close(); resolves once the status is in. */
export function holdGet(url: string, headers: Record<string, string> = {}, timeoutMs = 3_000): Promise<HeldRequest> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, headers }, (res) => {
      clearTimeout(timer);
      res.resume();
      resolve({ status: res.statusCode!, close: () => req.destroy() });
    });
    const timer = setTimeout(() => resolve({ status: 0, close: () => req.destroy() }), timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve({ status: 0, close: () => undefined });
    });
    req.end();
  });
}
