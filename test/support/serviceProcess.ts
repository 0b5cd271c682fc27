// The service as separate processes, for tests that kill it (SIGKILL), restart it on the same
// data, or run two nodes on one store: `node --import tsx src/main.ts` with its configuration in
// the environment, the operator CLI as a child process, and a read-only view of the SQLite log
// so a test can see which step a request has reached without hooks in the service.
import Database from 'better-sqlite3';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import type { DomainEvent, DomainEventType } from '../../src/domain/events.js';
import { eventually } from './eventually.js';
import { type AnswerBody, requestAt } from './request.js';

const root = new URL('../..', import.meta.url).pathname;
const START_TIMEOUT_MS = 30_000;

/** Every child started here and not yet gone, so that a failing test cannot leave one behind. */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface Answer {
  /** 0 when no answer came (the connection failed: the process was killed). */
  status: number;
  body: AnswerBody;
  text: string;
  headers: Headers;
}

export interface ServiceProcess {
  url: string;
  nodeId: string;
  pid: number;
  /** Everything the process wrote, stdout and stderr. */
  output(): string;
  /** Sends a request; never rejects (a dead connection answers status 0). */
  request(method: string, path: string, init?: { body?: unknown; apiKey?: string; idempotencyKey?: string }): Promise<Answer>;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

export interface ServiceProcessOptions {
  dataDir: string;
  communityUrl: string;
  nodeId: string;
  /** Added to (and overriding) the defaults below. */
  env?: Record<string, string>;
}

/** Small timeouts so that a suite's claims go stale and its platform calls give up within seconds. */
export const FAULT_ENV = {
  COMMUNITY_TIMEOUT_MS: '1000',
  IDEMPOTENCY_CLAIM_STALE_MS: '1500',
} as const;

export async function startServiceProcess({ dataDir, communityUrl, nodeId, env = {} }: ServiceProcessOptions): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      COMMUNITY_URL: communityUrl,
      COMMUNITY_KEY: SIMULATOR_KEY,
      NODE_ID: nodeId,
      LOG_LEVEL: 'info',
      ...FAULT_ENV,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      children.delete(child);
      resolve();
    }),
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await gone;
  };
  /** The "listening" log line once written; a process that exited first ends the wait. */
  const listening = () => {
    if (child.exitCode !== null) throw new Error(`service ${nodeId} exited with ${child.exitCode} before listening:\n${out}`);
    return out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === 'listening');
  };
  const started = await eventually(listening, { what: () => `service ${nodeId} to listen:\n${out}`, timeoutMs: START_TIMEOUT_MS }).catch(async (error: Error) => {
    await kill();
    throw error;
  });
  const url = started.url as string;
  return {
    url,
    nodeId,
    pid: child.pid!,
    output: () => out,
    request: (method, path, init = {}) => requestOrNoAnswer(url, method, path, init),
    kill,
  };
}

/** SIGKILLs every service process still running (for `after` hooks). */
export async function killServiceProcesses(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * A request to a service process that may be killed or stopped: no answer is status 0, with
 * the reason as the text.
 */
export async function requestOrNoAnswer(url: string, method: string, path: string, init: { body?: unknown; apiKey?: string; idempotencyKey?: string }): Promise<Answer> {
  const headers: Record<string, string> = init.idempotencyKey ? { 'Idempotency-Key': init.idempotencyKey } : {};
  try {
    return await requestAt(url, method, path, { body: init.body, apiKey: init.apiKey, headers });
  } catch (error) {
    return { status: 0, body: undefined, text: String((error as Error).cause ?? error), headers: new Headers() };
  }
}

export interface CliRun {
  /** null when it was killed (past its time). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of the repository's entry points (the CLI unless told) to its end, 60 s at most, with
 * `env` over this process's (silent logs unless `env` says otherwise).
 */
export function runToEnd(args: string[], env: Record<string, string> = {}, entry = 'src/cli/main.ts'): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', entry, ...args],
      { cwd: root, env: { ...process.env, LOG_LEVEL: 'silent', ...env }, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

/** Ends a child that closes what it holds on SIGTERM; SIGKILL if it has not gone within 10 s. */
export async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const stubborn = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(stubborn);
}

/** The CLI on the SQLite store in `dataDir`. */
export function cli(dataDir: string, ...args: string[]): Promise<CliRun> {
  return runToEnd(args, { DATA_DIR: dataDir });
}

/** The one JSON document a successful `--json` command printed, as the shape the caller expects of that command. */
export function cliJson<T>(run: CliRun): T {
  assert.is(run.code, 0, `exit ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

/** Issues an API key through the CLI; returns it in clear with its id. */
/** `flags`: more of `keys create`'s flags (e.g. --all-apps). */
export async function issueKey(dataDir: string, permissions = '*', app = 'game', ...flags: string[]): Promise<{ id: string; key: string; appId: string }> {
  return cliJson(await cli(dataDir, 'keys', 'create', '--app-id', app, '--permissions', permissions, ...flags, '--json'));
}

/** An event of the log, its type telling its data (`T` narrows it to some types). */
export type LoggedEvent<T extends DomainEventType = DomainEventType> = Extract<DomainEvent, { type: T }> & {
  position: number;
  stream: string;
  /** Where the event came from (src/system/eventMetadata.ts), when it says. */
  metadata: Record<string, unknown> | undefined;
  /** When the log recorded it (the store's stamp, on the log's clock). */
  created: string;
};

/** A row of the events table, its JSON columns as text. */
interface LogRow {
  position: number;
  stream: string;
  type: string;
  data: string;
  metadata: string | null;
  created: string;
}

/** The service's SQLite log, read as another process would (the service never waits for us). */
export class EventLog {
  private readonly db: Database.Database;
  private hasStatement: Database.Statement<[string, string]> | undefined;

  constructor(dataDir: string) {
    this.db = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
  }

  /** The points edit intent (PointsEditRequested) with this memo, if recorded. */
  pointsIntent(memo: string): LoggedEvent<'PointsEditRequested'> | undefined {
    return this.ofType('PointsEditRequested').find((e) => e.data.request?.memo === memo);
  }

  /** Whether this stream holds an event of this type (cheap enough to poll in a tight loop). */
  has(stream: string, type: string): boolean {
    this.hasStatement ??= this.db.prepare<[string, string]>('SELECT 1 FROM events WHERE stream = ? AND type = ? LIMIT 1');
    return this.hasStatement.get(stream, type) !== undefined;
  }

  stream(name: string): LoggedEvent[] {
    return this.db.prepare<[string], LogRow>('SELECT position, stream, type, data, metadata, created FROM events WHERE stream = ? ORDER BY revision').all(name).map(parsed);
  }

  /** Every event after this position, oldest first. */
  after(position: number): LoggedEvent[] {
    return this.db.prepare<[number], LogRow>('SELECT position, stream, type, data, metadata, created FROM events WHERE position > ? ORDER BY position').all(position).map(parsed);
  }

  ofType<T extends DomainEventType>(type: T): LoggedEvent<T>[] {
    return this.db
      .prepare<[string], LogRow>('SELECT position, stream, type, data, metadata, created FROM events WHERE type = ? ORDER BY position')
      .all(type)
      .map((row) => parsed(row) as LoggedEvent<T>);
  }

  close(): void {
    this.db.close();
  }
}

const parsed = (row: LogRow): LoggedEvent => ({ ...row, data: JSON.parse(row.data), metadata: row.metadata === null ? undefined : JSON.parse(row.metadata) }) as LoggedEvent;
