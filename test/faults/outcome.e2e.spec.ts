// Errors after sending: the platform applied (or may have applied) a write but the service never
// learnt it (a reset after applying, a timeout, an answer too late, the outcome not recordable).
// The request answers 504 "outcome unknown" with the operation's id, a retry with the same
// Idempotency-Key never sends it again, and the operator's resolution (CLI or HTTP) decides what
// the key answers from then on. The simulator's ledger is the truth throughout.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { ALICE } from '../support/harness.js';
import { cli, issueKey, type Answer, type ServiceProcess } from '../support/serviceProcess.js';
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

const outcome = suite<{ world: World; service: ServiceProcess }>('errors after sending: outcome unknown');

outcome.before(async (context) => {
  context.world = await openWorld();
  context.service = await context.world.start('node-outcome');
});
outcome.after(async ({ world }) => {
  await world?.close();
});

/** An entry of `operations list --json`, as far as these tests read it. */
type ListedOperation = { operationId: string; oId: string; appId: string; node: string | null; kind: string; requestedAt: string; reason: string | null };

const edit = (service: ServiceProcess, world: World, idempotencyKey: string, memo: string) => pointsEdit(service, world, idempotencyKey, memo);

/** Retries until the answer is no longer 504 (the service has seen the resolution), for at most 5 s. */
const afterResolution = (retry: () => Promise<Answer>) =>
  eventually(
    async () => {
      const answer = await retry();
      return answer.status !== 504 ? answer : undefined;
    },
    { what: 'the retry to follow the resolution', timeoutMs: 5000, everyMs: 100 },
  );

outcome('reset after the platform applied: 502 outcome unknown with the operation id; retries replay it and never resend', async ({ world, service }) => {
  const memo = 'reset-after-applying';
  world.sim.faultNext(POINTS_PATH, { kind: 'applyThenReset' });
  const first = await edit(service, world, 'k-reset', memo);
  const intent = world.log.pointsIntent(memo);
  const atOnce = await edit(service, world, 'k-reset', memo);
  await pastClaimWindow();
  const later = await edit(service, world, 'k-reset', memo);

  assertAppliedAtMostOnce(world.sim, memo, [first, atOnce, later]);
  assert.is(pointsArrivals(world.sim, memo), 1, 'the platform was not called again');
  assertOutcomeUnknown(first, intent?.data.operationId);
  for (const retry of [atOnce, later]) {
    assertOutcomeUnknown(retry, first.body.data.operationId);
    assertReplayed(retry);
  }
  assert.is(world.sim.pointsApplied(memo), 1);
});

outcome('an answer later than the service waits (applied first): 504 outcome unknown; retries never resend', async ({ world, service }) => {
  const memo = 'answer-too-late';
  world.sim.faultNext(POINTS_PATH, { kind: 'applyThenDelay', ms: 3000 });
  const first = await edit(service, world, 'k-late', memo);
  const atOnce = await edit(service, world, 'k-late', memo);
  await pastClaimWindow();
  const later = await edit(service, world, 'k-late', memo);

  assertAppliedAtMostOnce(world.sim, memo, [first, atOnce, later]);
  assert.is(pointsArrivals(world.sim, memo), 1, 'the platform was not called again');
  assertOutcomeUnknown(first, undefined);
  for (const retry of [atOnce, later]) {
    assertOutcomeUnknown(retry, first.body.data.operationId);
    assertReplayed(retry);
  }
});

outcome('a platform that applies only after the service gave up: 504, and the retry does not apply it a second time', async ({ world, service }) => {
  const memo = 'applied-after-timeout';
  world.sim.faultNext(POINTS_PATH, { kind: 'delayThenApply', ms: 1500 });
  const first = await edit(service, world, 'k-slow', memo);
  assertOutcomeUnknown(first, undefined);
  await eventually(() => world.sim.pointsApplied(memo) === 1, { what: 'the platform applied the write' });
  const retry = await edit(service, world, 'k-slow', memo);
  assertAppliedAtMostOnce(world.sim, memo, [first, retry]);
  assert.is(pointsArrivals(world.sim, memo), 1, 'the platform was not called again');
  assertOutcomeUnknown(retry, first.body.data.operationId);
  assertReplayed(retry);
});

outcome('medal and item writes reset after applying: 502 outcome unknown; the retry does not resend', async ({ world, service }) => {
  const medal = { oId: ALICE.oId, name: 'Reset Medal', description: 'given once', attr: 'url=https://example.test/m.png&backcolor=ffffff&fontcolor=000000' };
  const items = { oId: ALICE.oId, item: 'resetCard', sum: 3 };
  for (const [route, platformPath, body, sent] of [
    ['/adm/medal/give', '/user/edit/give-metal', medal, (b: Record<string, unknown>) => b.name === medal.name],
    ['/adm/items/edit', '/user/edit/items', items, (b: Record<string, unknown>) => b.item === items.item],
  ] as const) {
    world.sim.faultNext(platformPath, { kind: 'applyThenReset' });
    const send = () => service.request('POST', route, { body, apiKey: world.key, idempotencyKey: `k-${platformPath}` });
    const first = await send();
    const retry = await send();
    assert.is(world.sim.arrivals(platformPath).filter((a) => sent(a.body)).length, 1, `${route} was sent to the platform again`);
    assertOutcomeUnknown(first, undefined);
    assertOutcomeUnknown(retry, first.body.data.operationId);
    assertReplayed(retry);
  }
  const user = world.sim.user(ALICE.oId)!;
  assert.is(user.medals.filter((m) => m.name === medal.name).length, 1);
  assert.is(user.items.resetCard, 3, 'the items were added once');
});

outcome('an unexpected error after the platform applied (the outcome cannot be recorded): 504, and no retry applies it again', async ({ world, service }) => {
  const memo = 'outcome-not-recorded';
  // The platform answers a little late: the store is locked between the intent and the outcome.
  world.sim.faultNext(POINTS_PATH, { kind: 'applyThenDelay', ms: 300 });
  let answered = false;
  const pending = edit(service, world, 'k-unrecorded', memo).then((answer) => {
    answered = true;
    return answer;
  });
  const intent = await eventually(() => world.log.pointsIntent(memo), { what: 'the intent is in the log', timeoutMs: 10_000, everyMs: 1 });
  const lock = new Database(join(world.dataDir, 'events.sqlite'), { timeout: 10_000 });
  lock.exec('BEGIN IMMEDIATE');
  const logged = service.output().length;
  try {
    // Held until the service has given up recording the outcome (it logs the error) or has answered.
    await eventually(() => answered || /locked|SQLITE_BUSY/i.test(service.output().slice(logged)), { what: 'the service met the locked store', timeoutMs: 45_000, everyMs: 50 });
  } finally {
    lock.exec('ROLLBACK');
    lock.close();
  }
  const first = await pending;
  const atOnce = await edit(service, world, 'k-unrecorded', memo);
  await pastClaimWindow();
  const later = await edit(service, world, 'k-unrecorded', memo);

  assertAppliedAtMostOnce(world.sim, memo, [first, atOnce, later]);
  assert.is(pointsArrivals(world.sim, memo), 1, 'the platform was not called again');
  assertOutcomeUnknown(first, intent.data.operationId, ['unknown', 'pending']);
  assert.ok([409, 504].includes(atOnce.status), `at once: ${atOnce.status} ${atOnce.text}`);
  assertOutcomeUnknown(later, intent.data.operationId, ['unknown', 'pending']);
  assertReplayed(later);
});

outcome('the operator lists unknown outcomes and resolves one as not applied with the CLI; the retry then answers 409 not applied', async ({ world, service }) => {
  const memo = 'resolved-not-applied';
  world.sim.faultNext(POINTS_PATH, { kind: 'hang' });
  const first = await edit(service, world, 'k-not-applied', memo);
  assertOutcomeUnknown(first, undefined);
  const { operationId } = first.body.data;

  const listed = await cli(world.dataDir, 'operations', 'list', '--unknown', '--json');
  assert.is(listed.code, 0, listed.stderr);
  const unknown = JSON.parse(listed.stdout) as ListedOperation[];
  assert.ok(Array.isArray(unknown));
  assert.ok(
    unknown.every((op, i) => i === 0 || op.requestedAt >= unknown[i - 1]!.requestedAt),
    'oldest first',
  );
  const entry = unknown.find((op) => op.operationId === operationId);
  assert.ok(entry, `${operationId} is not listed: ${listed.stdout}`);
  assert.is(entry.oId, ALICE.oId);
  assert.is(entry.appId, 'game');
  assert.is(entry.node, 'node-outcome');
  assert.type(entry.kind, 'string');
  assert.type(entry.requestedAt, 'string');
  assert.type(entry.reason, 'string');
  const human = await cli(world.dataDir, 'operations', 'list', '--unknown');
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, operationId);

  const resolved = await cli(world.dataDir, 'operations', 'resolve', operationId, '--not-applied', '--note', 'not in the platform ledger', '--by', 'fault-suite', '--json');
  assert.is(resolved.code, 0, resolved.stderr);
  assert.match(resolved.stdout, operationId);
  const retry = await afterResolution(() => edit(service, world, 'k-not-applied', memo));
  assert.is(retry.status, 409, retry.text);
  assert.is(retry.body.code, 409);
  assert.match(retry.body.message, /not applied/);
  assert.is(retry.body.data.operationId, operationId);

  const again = await cli(world.dataDir, 'operations', 'resolve', operationId, '--applied');
  assert.is(again.code, 1, `resolving an operation that is no longer unknown: exit ${again.code} ${again.stderr}`);
  const stillListed = await cli(world.dataDir, 'operations', 'list', '--unknown', '--json');
  assert.not.ok(
    (JSON.parse(stillListed.stdout) as ListedOperation[]).some((op) => op.operationId === operationId),
    'no longer listed as unknown',
  );

  const audited = await auditEntry(service, world, memo);
  assert.is(audited?.outcome?.status, 'failed', JSON.stringify(audited));
  assert.match(JSON.stringify(audited!.outcome), 'not in the platform ledger');
  assert.is(pointsArrivals(world.sim, memo), 1, 'the platform was not called again');
  assert.is(world.sim.pointsApplied(memo), 0);
});

outcome('the operator resolves an unknown outcome as applied over HTTP (operations:resolve); the retry then answers 200', async ({ world, service }) => {
  const memo = 'resolved-applied';
  world.sim.faultNext(POINTS_PATH, { kind: 'applyThenHang' });
  const first = await edit(service, world, 'k-applied', memo);
  assertOutcomeUnknown(first, undefined);
  const { operationId } = first.body.data;
  const before = await auditEntry(service, world, memo);
  assert.is(before?.outcome?.status, 'unknown', JSON.stringify(before));
  assert.type(before!.outcome.reason, 'string');

  // A key the CLI creates reaches the running service within a second: until then it is 401.
  const resolve = async (permission: string, app: string) => {
    // The operator's key is another app's: it reaches the game's operation as an all-apps key.
    const { key } = await issueKey(world.dataDir, permission, app, '--all-apps');
    const send = () => service.request('POST', `/adm/operations/${operationId}/resolve`, { body: { applied: true, note: 'seen in the platform ledger' }, apiKey: key });
    return eventually(
      async () => {
        const answer = await send();
        return answer.status !== 401 ? answer : undefined;
      },
      { what: 'the service to know the new key', timeoutMs: 5000, everyMs: 50 },
    );
  };
  assert.is((await resolve('points:edit', 'game')).status, 403, 'operations:resolve is needed');
  const resolved = await resolve('operations:resolve', 'ops');
  assert.is(resolved.status, 200, resolved.text);
  assert.equal(resolved.body, { code: 0, msg: 'success', data: { operationId, status: resolved.body.data?.status } });
  assert.type(resolved.body.data.status, 'string');

  const retry = await afterResolution(() => edit(service, world, 'k-applied', memo));
  assert.is(retry.status, 200, retry.text);
  assert.is(retry.body.code, 0);
  assert.type(retry.body.msg, 'string');
  assertReplayed(retry);
  const after = await auditEntry(service, world, memo);
  assert.is(after?.outcome?.status, 'applied', JSON.stringify(after));
  assert.match(JSON.stringify(after!.outcome), 'seen in the platform ledger');
  assert.is(pointsArrivals(world.sim, memo), 1, 'the platform was not called again');
  assert.is(world.sim.pointsApplied(memo), 1);
});

outcome.run();
