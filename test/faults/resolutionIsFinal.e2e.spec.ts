// An operator's resolution is final. The sender of a points edit stalls (SIGSTOP) while the
// platform applies it; another node, seeing the sender's lease lapse, marks it unknown; an operator
// resolves it as not applied; then the sender resumes and the platform's late answer ("applied")
// reaches it. The late answer is kept beside the resolution, the resolution stands, and both the
// sender's answer and a retry's say what the operator decided, and that the platform said otherwise.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import type { PointsAuditPage } from '../../src/contract/answers.js';
import { eventually } from '../support/eventually.js';
import { cli, cliJson, type ServiceProcess } from '../support/serviceProcess.js';
import { openWorld, POINTS_PATH, pointsEdit, stopOutsideStoreWrite, type World } from './world.js';

const SUITE_ENV = { NODE_HEARTBEAT_MS: '200', COMMUNITY_TIMEOUT_MS: '20000', OPERATION_PENDING_GRACE_MS: '2000' };
/** The platform applies at once and answers this much later: after the operator has resolved it. */
const ANSWER_AFTER_MS = 9000;

/** An entry of `operations list --conflicts --json`, as far as this suite reads it. */
type Conflict = { operationId: string; status: string; answeredAfterResolution: { answer: string } };

const resolution = suite<{ world: World; sender: ServiceProcess; other: ServiceProcess }>("an operator's resolution is final");

resolution.before(async (context) => {
  context.world = await openWorld(SUITE_ENV);
  context.sender = await context.world.start('res-sender');
  context.other = await context.world.start('res-other');
});
resolution.after(async ({ world, sender }) => {
  if (sender) process.kill(sender.pid, 'SIGCONT');
  await world?.close();
});

resolution('a platform answer that arrives after the resolution is kept beside it and never overrides it', async ({ world, sender, other }) => {
  world.sim.faultNext(POINTS_PATH, { kind: 'applyThenDelay', ms: ANSWER_AFTER_MS });
  const first = pointsEdit(sender, world, 'resolved-key', 'resolved-memo');
  const intent = await eventually(() => world.log.pointsIntent('resolved-memo'), { what: 'the intent is recorded' });
  await stopOutsideStoreWrite(sender.pid, world.dataDir);
  const operationId = intent.data.operationId as string;
  await eventually(() => world.log.has(intent.stream, 'OperationOutcomeUnknown'), { what: 'the other node marks it unknown', timeoutMs: 15_000, everyMs: 50 });

  const resolved = await other.request('POST', `/adm/operations/${operationId}/resolve`, { body: { applied: false, note: 'checked: not on the platform' }, apiKey: world.key });
  assert.is(resolved.status, 200, resolved.text);
  process.kill(sender.pid, 'SIGCONT');

  const answer = await first;
  assert.is(answer.status, 409, answer.text);
  assert.match(answer.body.message, /not applied \(resolved by app game \(key \w+\): checked: not on the platform/);
  assert.match(answer.body.message, /afterwards/);
  assert.match(answer.body.message, /check the user on the platform before sending it again/);

  const types = world.log.stream(intent.stream).map((e) => e.type);
  assert.equal(types, ['PointsEditRequested', 'OperationOutcomeUnknown', 'OperationResolved', 'OperationAnsweredAfterResolution']);

  const retry = await pointsEdit(other, world, 'resolved-key', 'resolved-memo');
  assert.is(retry.status, 409, retry.text);
  assert.match(retry.body.message, /resolved by app game \(key \w+\): checked: not on the platform/);
  assert.is(world.sim.pointsApplied('resolved-memo'), 1, 'the platform applied it once (and was not called again)');

  const audit = await other.request('GET', `/adm/audit/points/${intent.data.oId}?limit=100`, { apiKey: world.key });
  const entry = (audit.body as v.InferOutput<typeof PointsAuditPage>).data.items.find((item) => item.operationId === operationId);
  assert.is(entry?.outcome.status, 'failed', JSON.stringify(entry));
  assert.is(entry!.outcome.resolution!.applied, false);
  assert.is(entry!.outcome.answeredAfterResolution?.answer, 'applied', JSON.stringify(entry));

  const [conflict] = cliJson<Conflict[]>(await cli(world.dataDir, 'operations', 'list', '--conflicts', '--json'));
  assert.is(conflict?.operationId, operationId);
  assert.is(conflict!.status, 'failed');
  assert.is(conflict!.answeredAfterResolution.answer, 'OperationApplied');
});

resolution.run();
