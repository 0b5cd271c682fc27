// Exactly once under kill -9: the service process is SIGKILLed while it holds one points edit at
// each step (before the intent, after the intent, after the platform applied, after the outcome),
// then the client retries every one with the same Idempotency-Key at once and again after the
// claim window, on the restarted node (same NODE_ID) or on another node of the same store. The
// platform's own ledger decides: every request applied at most once, every request acknowledged
// with 200 applied exactly once, and the platform never called again for an unknown outcome.
import Database from 'better-sqlite3';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB } from '../support/harness.js';
import type { Answer, ServiceProcess } from '../support/serviceProcess.js';
import {
  assertAppliedAtMostOnce,
  assertOutcomeUnknown,
  assertReplayed,
  auditEntry,
  openWorld,
  pastClaimWindow,
  POINTS_PATH,
  pointsArrivals,
  pointsEdit,
  type World,
} from './world.js';

const LOOKUP_PATH = '/api/user/getInfoById';
// The platform calls in flight at the kill must not time out first: the steps are set up one by one.
const SUITE_ENV = { COMMUNITY_TIMEOUT_MS: '15000' };

/** One request held at one step when the process died, and the answers to its retries. */
interface Held {
  memo: string;
  idempotencyKey: string;
  oId: string;
  first: Promise<Answer>;
  operationId?: string;
  atOnce?: Answer;
  later?: Answer;
}

type Step = 'beforeIntent' | 'afterIntent' | 'afterApplied' | 'afterOutcome';

interface Context {
  world: World;
  held: Partial<Record<Step, Held>>;
  restarted?: ServiceProcess;
  /** Requests whose kill came after the process had also committed what follows the outcome. */
  lateKills?: Held[];
}

const edit = (service: ServiceProcess, world: World, held: Pick<Held, 'memo' | 'idempotencyKey' | 'oId'>) => pointsEdit(service, world, held.idempotencyKey, held.memo, held.oId);

function hold(service: ServiceProcess, world: World, memo: string, oId: string = ALICE.oId): Held {
  const request = { memo, idempotencyKey: `key-${memo}`, oId };
  return { ...request, first: edit(service, world, request) };
}

/** Sends a request whose user lookup hangs (nothing recorded yet but the claim); resolves once it hangs. */
async function holdBeforeIntent(service: ServiceProcess, world: World, memo: string): Promise<Held> {
  const lookups = world.sim.arrivals(LOOKUP_PATH).length;
  world.sim.faultNext(LOOKUP_PATH, { kind: 'hang' });
  // Another user than the other steps': concurrent lookups of one user share one platform call.
  const held = hold(service, world, memo, BOB.oId);
  await eventually(() => world.sim.arrivals(LOOKUP_PATH).length > lookups, { what: 'the user lookup reached the platform' });
  return held;
}

/** Sends a request whose platform write arrives and hangs without applying; resolves once it hangs. */
async function holdAfterIntent(service: ServiceProcess, world: World, memo: string): Promise<Held> {
  world.sim.faultNext(POINTS_PATH, { kind: 'hang' });
  const held = hold(service, world, memo);
  await eventually(() => pointsArrivals(world.sim, memo) === 1, { what: 'the write reached the platform' });
  held.operationId = (await eventually(() => world.log.pointsIntent(memo), { what: 'the intent is in the log' })).data.operationId;
  return held;
}

/** Sends a request the platform applies without ever answering; resolves once it was applied. */
async function holdAfterApplied(service: ServiceProcess, world: World, memo: string): Promise<Held> {
  world.sim.faultNext(POINTS_PATH, { kind: 'applyThenHang' });
  const held = hold(service, world, memo);
  await eventually(() => world.sim.pointsApplied(memo) === 1, { what: 'the platform applied the write' });
  held.operationId = world.log.pointsIntent(memo)?.data.operationId;
  assert.ok(held.operationId, 'the intent was recorded before the platform was called');
  return held;
}

/**
 * Sends a request and SIGKILLs the service as soon as its outcome is in the log, holding the
 * store's write lock from that moment so that nothing the process does after the outcome (such as
 * keeping the answer for the Idempotency-Key) is committed before it dies. `won` is false when
 * the process still committed something after the outcome before the lock was taken (the test
 * process was not scheduled in time); the kill then came one step later than meant.
 */
async function killRightAfterOutcome(service: ServiceProcess, world: World, memo: string): Promise<{ held: Held; won: boolean }> {
  // On a busy machine the service, at the lowest priority, rarely runs ahead of this process.
  setPriority(service.pid, 19);
  const held = hold(service, world, memo);
  await eventually(() => world.sim.arrivals(POINTS_PATH).some((a) => a.body.memo === memo && a.answered), { what: `the platform to answer "${memo}"`, everyMs: 0 });
  const intent = world.log.pointsIntent(memo);
  assert.ok(intent, 'the intent was recorded before the platform was called');
  held.operationId = intent!.data.operationId;
  const lock = new Database(join(world.dataDir, 'events.sqlite'), { timeout: 10_000 });
  try {
    // The platform has answered: from here a synchronous loop (no turn of the event loop between
    // two looks, so not eventually()) sees the outcome within microseconds of its commit, normally
    // long before the service can commit anything after it.
    for (const deadline = Date.now() + 10_000; !world.log.has(intent!.stream, 'OperationApplied'); ) {
      if (Date.now() > deadline) throw new Error(`no OperationApplied for "${memo}"`);
    }
    lock.exec('BEGIN IMMEDIATE');
    await service.kill();
    const outcome = world.log.stream(intent!.stream).find((e) => e.type === 'OperationApplied')!;
    const won = world.log.after(outcome.position).length === 0;
    if (!won)
      console.error(
        `[kill] "${memo}": the process committed past the outcome before the lock (${world.log
          .after(outcome.position)
          .map((e) => e.type)
          .join(', ')}); trying again`,
      );
    lock.exec('ROLLBACK');
    return { held, won };
  } finally {
    lock.close();
  }
}

/** Retries every held request at once, then again after the claim window. */
async function retryAll(service: ServiceProcess, world: World, held: Held[], staleMs?: number): Promise<void> {
  const atOnce = await Promise.all(held.map((h) => edit(service, world, h)));
  for (const [i, answer] of atOnce.entries()) held[i]!.atOnce = answer;
  await pastClaimWindow(staleMs);
  const later = await Promise.all(held.map((h) => edit(service, world, h)));
  for (const [i, answer] of later.entries()) held[i]!.later = answer;
}

async function assertCutOff(held: Held): Promise<void> {
  const answer = await held.first;
  assert.is(answer.status, 0, `the killed process answered "${held.memo}" with ${answer.status}: ${answer.text}`);
}

// ---------------------------------------------------------------------------------------------
const sameNode = suite<Context>('kill -9 at each step, retried on the node restarted with the same NODE_ID');

sameNode.before(async (context) => {
  context.world = await openWorld(SUITE_ENV);
  context.held = {};
});
sameNode.after(async ({ world }) => {
  await world?.close();
});

sameNode('the process is killed with one request at each step, restarted, and every request retried at once and after the claim window', async (context) => {
  const { world, held } = context;
  const service = await world.start('node-restarted');
  held.afterIntent = await holdAfterIntent(service, world, 'same-node-after-intent');
  held.afterApplied = await holdAfterApplied(service, world, 'same-node-after-applied');
  held.beforeIntent = await holdBeforeIntent(service, world, 'same-node-before-intent');
  assert.is(world.log.pointsIntent('same-node-before-intent'), undefined, 'no intent while the lookup hangs');
  let killed = await killRightAfterOutcome(service, world, 'same-node-after-outcome-1');
  for (const step of ['beforeIntent', 'afterIntent', 'afterApplied'] as const) await assertCutOff(held[step]!);
  context.restarted = await world.start('node-restarted');
  // Until the kill lands between the outcome and whatever the process commits next.
  context.lateKills = [];
  for (let attempt = 2; !killed.won; attempt++) {
    assert.ok(attempt <= 5, 'the kill never landed right after the outcome in 4 attempts');
    context.lateKills.push(killed.held);
    killed = await killRightAfterOutcome(context.restarted, world, `same-node-after-outcome-${attempt}`);
    context.restarted = await world.start('node-restarted');
  }
  held.afterOutcome = killed.held;
  await retryAll(context.restarted, world, [...Object.values(held), ...context.lateKills]);
});

sameNode('killed before the intent (user lookup hanging): the retry runs, once', ({ world, held: { beforeIntent: h } }) => {
  assertAppliedAtMostOnce(world.sim, h!.memo, [h!.atOnce!, h!.later!]);
  assert.is(h!.atOnce!.status, 200, `a claim with no intent left by this node is free after its restart: ${h!.atOnce!.text}`);
  assert.is(h!.atOnce!.body.code, 0);
  assert.is(h!.atOnce!.headers.get('idempotent-replayed'), null, 'it ran, it was not a replay');
  assert.is(h!.later!.status, 200, h!.later!.text);
  assert.equal(h!.later!.body, h!.atOnce!.body);
  assertReplayed(h!.later!);
  assert.is(world.sim.pointsApplied(h!.memo), 1);
});

sameNode(
  'killed after the intent (write hanging, not applied): 504 outcome unknown at once and later; the platform is not called again',
  async ({ world, held: { afterIntent: h }, restarted }) => {
    assertAppliedAtMostOnce(world.sim, h!.memo, [h!.atOnce!, h!.later!]);
    assert.is(pointsArrivals(world.sim, h!.memo), 1, 'the platform was not called again');
    for (const answer of [h!.atOnce!, h!.later!]) {
      assertOutcomeUnknown(answer, h!.operationId);
      assertReplayed(answer);
    }
    const audited = await auditEntry(restarted!, world, h!.memo);
    assert.is(audited?.outcome?.status, 'unknown', JSON.stringify(audited));
    assert.match(audited!.outcome.reason!, /restart/i, 'closed as unknown by the restart');
    assert.is(world.sim.pointsApplied(h!.memo), 0);
  },
);

sameNode('killed after the platform applied (no answer): 504 outcome unknown at once and later; applied exactly once', ({ world, held: { afterApplied: h } }) => {
  assertAppliedAtMostOnce(world.sim, h!.memo, [h!.atOnce!, h!.later!]);
  assert.is(pointsArrivals(world.sim, h!.memo), 1, 'the platform was not called again');
  for (const answer of [h!.atOnce!, h!.later!]) {
    assertOutcomeUnknown(answer, h!.operationId);
    assertReplayed(answer);
  }
  assert.is(world.sim.pointsApplied(h!.memo), 1);
});

sameNode('killed right after the outcome was recorded: the 200 is replayed at once and later; applied exactly once', ({ world, held: { afterOutcome }, lateKills }) => {
  for (const h of [afterOutcome, ...lateKills!]) assertAnswerReplayed(world, h);
});

function assertAnswerReplayed(world: World, h: Held | undefined): void {
  assertAppliedAtMostOnce(world.sim, h!.memo, [h!.atOnce!, h!.later!]);
  assert.is(pointsArrivals(world.sim, h!.memo), 1, 'the platform was not called again');
  for (const answer of [h!.atOnce!, h!.later!]) {
    assert.is(answer.status, 200, answer.text);
    assert.is(answer.body.code, 0);
    assert.match(answer.body.msg, /积分变更成功/);
    assertReplayed(answer);
  }
  assert.is(world.sim.pointsApplied(h!.memo), 1);
}

sameNode.run();

// ---------------------------------------------------------------------------------------------
// The other node is up before the kill, so that its first retry meets claims that are still fresh.
const OTHER_STALE_MS = 4000;
const otherNode = suite<Context & { other?: ServiceProcess }>('kill -9 at each step, retried on another node of the same store');

otherNode.before(async (context) => {
  // Heartbeats every 200 ms: the killed node counts as gone well within the claim window.
  context.world = await openWorld({ ...SUITE_ENV, NODE_HEARTBEAT_MS: '200', IDEMPOTENCY_CLAIM_STALE_MS: String(OTHER_STALE_MS), OPERATION_PENDING_GRACE_MS: '6000' });
  context.held = {};
});
otherNode.after(async ({ world }) => {
  await world?.close();
});

otherNode('node A is killed with one request at each step; node B gets every retry at once and after the claim window', async (context) => {
  const { world, held } = context;
  const [a, b] = await Promise.all([world.start('node-a'), world.start('node-b')]);
  context.other = b;
  held.afterIntent = await holdAfterIntent(a, world, 'other-node-after-intent');
  held.afterApplied = await holdAfterApplied(a, world, 'other-node-after-applied');
  held.beforeIntent = await holdBeforeIntent(a, world, 'other-node-before-intent');
  await a.kill();
  for (const step of ['beforeIntent', 'afterIntent', 'afterApplied'] as const) await assertCutOff(held[step]!);
  await retryAll(b, world, Object.values(held), OTHER_STALE_MS);
});

otherNode('while the claims are fresh, another node answers 409 naming no stream or revision', ({ held }) => {
  for (const h of Object.values(held)) {
    assert.is(h.atOnce!.status, 409, `"${h.memo}": ${h.atOnce!.text}`);
    assert.equal(Object.keys(h.atOnce!.body).sort(), ['code', 'data', 'message']);
    assert.is(h.atOnce!.body.code, 409);
    assert.equal(h.atOnce!.body.data, { reason: 'claim_in_progress', retryAfterSeconds: 1 });
    assert.not.match(h.atOnce!.text, /idempotency-|operation-|revision/);
  }
});

otherNode('killed before the intent: after the claim window the stale claim is taken over and the request runs once', ({ world, held: { beforeIntent: h } }) => {
  assertAppliedAtMostOnce(world.sim, h!.memo, [h!.atOnce!, h!.later!]);
  assert.is(h!.later!.status, 200, h!.later!.text);
  assert.is(h!.later!.headers.get('idempotent-replayed'), null, 'it ran, it was not a replay');
  assert.is(world.sim.pointsApplied(h!.memo), 1);
});

otherNode('killed after the intent or after the platform applied: 504 after the claim window, the platform never called again', ({ world, held }) => {
  for (const h of [held.afterIntent!, held.afterApplied!]) {
    assertAppliedAtMostOnce(world.sim, h.memo, [h.atOnce!, h.later!]);
    assert.is(pointsArrivals(world.sim, h.memo), 1, `"${h.memo}" was sent to the platform again`);
    assertOutcomeUnknown(h.later!, h.operationId, ['pending', 'unknown']);
    assertReplayed(h.later!);
  }
  assert.is(world.sim.pointsApplied(held.afterIntent!.memo), 0);
  assert.is(world.sim.pointsApplied(held.afterApplied!.memo), 1);
});

otherNode("once the pending grace has passed, a node closes the dead node's operations as unknown; the retry then says unknown", async ({ world, held, other }) => {
  const h = held.afterApplied!;
  const answer = await eventually(
    async () => {
      const retry = await edit(other!, world, h);
      return retry.status !== 504 || retry.body?.data?.status === 'unknown' ? retry : undefined;
    },
    { what: 'the pending operation to be closed as unknown', timeoutMs: 15_000, everyMs: 250 },
  );
  assertOutcomeUnknown(answer, h.operationId);
  assert.is(pointsArrivals(world.sim, h.memo), 1, 'the platform was not called again');
  assert.is(world.sim.pointsApplied(h.memo), 1);
});

otherNode.run();
