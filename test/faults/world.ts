// What every fault suite shares: one simulator (the platform, whose ledger is the truth), one
// data directory with a key issued by the CLI, and the log read-only. Tests use their own memos,
// Idempotency-Keys and NODE_IDs, so they do not see each other's requests.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import { createSimulator, type SimulatorState } from '../../src/community/simulator.js';
import type { PointsAuditEntry, PointsAuditPage } from '../../src/contract/answers.js';
import { ALICE, defaultUsers } from '../support/harness.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { EventLog, FAULT_ENV, issueKey, killServiceProcesses, startServiceProcess, type Answer, type ServiceProcess } from '../support/serviceProcess.js';

export const POINTS_PATH = '/user/edit/points';

export interface World {
  dataDir: string;
  sim: SimulatorState;
  simUrl: string;
  /** A key with every permission, app "game". */
  key: string;
  log: EventLog;
  /** A service process on this data directory; `env` adds to (and overrides) the suite's. */
  start(nodeId: string, env?: Record<string, string>): Promise<ServiceProcess>;
  close(): Promise<void>;
}

export async function openWorld(suiteEnv: Record<string, string> = {}): Promise<World> {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-faults-'));
  const simulator = createSimulator({ users: defaultUsers() });
  const running = await simulator.listen();
  const { key } = await issueKey(dataDir);
  const log = new EventLog(dataDir);
  return {
    dataDir,
    sim: simulator.state,
    simUrl: running.url,
    key,
    log,
    start: (nodeId, env) => startServiceProcess({ dataDir, communityUrl: running.url, nodeId, env: { ...suiteEnv, ...env } }),
    async close() {
      await killServiceProcesses();
      log.close();
      await running.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Stops the process (SIGSTOP) where a test means to (its request waiting on the platform), not
 * inside one of its own store writes (a heartbeat): stopped there, it would hold the SQLite file's
 * write lock, and every process on the file would wait on it (docs/production.md), which is not
 * what these tests are about.
 */
export async function stopOutsideStoreWrite(pid: number, dataDir: string): Promise<void> {
  const db = new Database(join(dataDir, 'events.sqlite'), { fileMustExist: true, timeout: 0 });
  try {
    for (let attempt = 0; ; attempt++) {
      process.kill(pid, 'SIGSTOP');
      try {
        db.exec('BEGIN IMMEDIATE; ROLLBACK');
        return;
      } catch (error) {
        if (attempt >= 50 || (error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      }
      process.kill(pid, 'SIGCONT');
      await sleep(10);
    }
  } finally {
    db.close();
  }
}

/** Signs a client of `oId` in through `node`, its stream kept in `streams` (closed by the suite); answers its client id. */
export async function signInThrough(node: ServiceProcess, oId: string, streams: Array<{ close(): void }>): Promise<string> {
  const client = await connect(node);
  streams.push(client.stream);
  await signIn(node, client.clientId, oId);
  return client.clientId;
}

/** A points edit of 1 with this memo (unique per request) and Idempotency-Key, by the world's key. */
export function pointsEdit(service: ServiceProcess, world: World, idempotencyKey: string, memo: string, oId: string = ALICE.oId): Promise<Answer> {
  return service.request('POST', '/adm/points/edit', { body: { oId, point: 1, memo }, apiKey: world.key, idempotencyKey });
}

/** The audit entry of alice's points edit with this memo. */
export async function auditEntry(service: ServiceProcess, world: World, memo: string): Promise<v.InferOutput<typeof PointsAuditEntry> | undefined> {
  const res = await service.request('GET', `/adm/audit/points/${ALICE.oId}?limit=100`, { apiKey: world.key });
  assert.is(res.status, 200, res.text);
  return (res.body as v.InferOutput<typeof PointsAuditPage>).data.items.find((item) => item.request?.memo === memo);
}

/** Waits until a claim taken now would be stale (a wait for the window, not an assertion). */
export const pastClaimWindow = (staleMs = Number(FAULT_ENV.IDEMPOTENCY_CLAIM_STALE_MS)) => sleep(staleMs + 300);

/** How many points edits with this memo reached the platform (applied or not). */
export const pointsArrivals = (sim: SimulatorState, memo: string) => sim.arrivals(POINTS_PATH).filter((a) => a.body.memo === memo).length;

/** The platform's ledger says this memo was applied at most once, and exactly once if any answer acknowledged it. */
export function assertAppliedAtMostOnce(sim: SimulatorState, memo: string, answers: Answer[]): void {
  const applied = sim.pointsApplied(memo);
  assert.ok(applied <= 1, `"${memo}" was applied ${applied} times on the platform (answers: ${answers.map((a) => a.status).join(', ')})`);
  if (answers.some((a) => a.status === 200)) assert.is(applied, 1, `"${memo}" was acknowledged with 200 but applied ${applied} times`);
}

/**
 * The "outcome unknown" answer for this operation: 504 when the platform never answered, 502 when
 * it answered something unusable after receiving the write (a reset); a retry answers 504.
 */
export function assertOutcomeUnknown(answer: Answer, operationId: string | undefined, statuses: string[] = ['unknown']): void {
  assert.ok([502, 504].includes(answer.status), `expected 502/504 outcome unknown, got ${answer.status}: ${answer.text}`);
  assert.is(answer.body.code, answer.status);
  assert.match(answer.body.message, /^Outcome unknown: /, `expected an "outcome unknown" message: ${answer.text}`);
  assert.match(answer.body.message, /will not be sent again/);
  if (operationId) assert.is(answer.body.data?.operationId, operationId, answer.text);
  else assert.type(answer.body.data?.operationId, 'string');
  assert.ok(statuses.includes(answer.body.data?.status), `data.status ${answer.body.data?.status}, expected ${statuses.join(' or ')}`);
}

export function assertReplayed(answer: Answer): void {
  assert.is(answer.headers.get('idempotent-replayed'), 'true', `not marked as a replay: ${answer.status} ${answer.text}`);
}
