// VIP records (docs/api.md, "VIP") are the service's own truth, decided by the VIP decider.
import * as v from 'valibot';
import { batchOf } from '../../domain/decider.js';
import { streams } from '../../domain/events.js';
import { toSpecTimestamp } from '../../domain/time.js';
import { vipDecider, type SubmitVip, type VipRecord, type VipState } from '../../domain/vip.js';
import { handleCommand } from '../../services/commandHandler.js';
import { newRecordId } from '../../system/ids.js';
import { VipBatchAnswer, VipListBody, VipSubmitAnswer } from '../../contract/answers.js';
import { actorOf, route, type RouteContext, type RouteDeps } from '../route.js';
import { OIdParam, VipBatchBody, VipEntry, VipSubmitBody } from '../../contract/requests.js';
import { describeIssues } from '../validation.js';

const submitBatch = batchOf(vipDecider);

// Each record is answered as one object literal, never one object spread into another with fields
// added after it: a list builds one per record, and the spread would be most of its handler's work.
function briefRecord(record: VipRecord, expired = record.expired) {
  return { id: record.id, userId: record.userId, quality: record.quality, expired: toSpecTimestamp(expired) };
}

function fullRecord(record: VipRecord) {
  const { id, userId, quality, expired, created, updated } = record;
  return { id, userId, quality, expired: toSpecTimestamp(expired), created: toSpecTimestamp(created), updated: toSpecTimestamp(updated) };
}

/**
 * Decides the submissions on the user's VIP stream and answers with the records they leave, once
 * the read model has them (so a read that follows sees them). With an Idempotency-Key, the
 * records and the key's answer are one append, which lands only while the request holds its claim.
 */
async function submit<Answer>(
  ctx: RouteContext,
  { store, runner, readModels }: RouteDeps,
  userId: string,
  commands: SubmitVip[],
  answerOf: (records: VipState) => Answer,
): Promise<Answer> {
  const claim = ctx.state.writeClaim;
  const fence = claim && ((records: VipState) => claim.fenceWithAnswer(200, answerOf(records)));
  const { state, position } = await handleCommand(ctx.state.work, store, streams.vip(userId), submitBatch, commands, { known: readModels.vip.known(userId), fence });
  await runner.waitForRecorded(position);
  return answerOf(state);
}

export const vipRoutes = [
  route({
    method: 'get',
    path: '/adm/vip/:oId',
    tag: 'vip',
    summary: "A user's VIP records",
    access: { kind: 'apiKey', permission: 'vip:read' },
    params: OIdParam,
    ok: { description: 'The records, svip first', json: VipListBody },
    errors: [404, 502, 504],
    async handle(ctx, { params: { oId } }, { userSync, readModels }) {
      const { user } = await userSync.sync(ctx.state.work, oId);
      return { code: 0 as const, msg: 'success', data: readModels.vip.records(user.id).map(fullRecord) };
    },
  }),

  route({
    method: 'post',
    path: '/adm/vip/submit',
    tag: 'vip',
    summary: 'Grant or renew one VIP quality',
    description: 'Resubmitting a quality the user has keeps the record and its id and replaces `expired`.',
    access: { kind: 'apiKey', permission: 'vip:write' },
    body: VipSubmitBody,
    ok: { description: 'The record', json: VipSubmitAnswer },
    errors: [404, 502, 504],
    async handle(ctx, { body: { oId, quality, expired }, caller }, deps) {
      const { user } = await deps.userSync.sync(ctx.state.work, oId);
      const at = deps.clock.now();
      const command: SubmitVip = { type: 'SubmitVip', userId: user.id, quality, expired, newRecordId: newRecordId(), at, ...actorOf(caller) };
      return submit(ctx, deps, user.id, [command], (records) => ({ code: 0 as const, msg: 'success', data: fullRecord(records[quality]!) }));
    },
  }),

  route({
    method: 'post',
    path: '/adm/vip/batch-submit',
    tag: 'vip',
    summary: 'Grant or renew several VIP qualities at once',
    description: 'Valid entries are applied in request order in one atomic append; `failures` lists the others.',
    access: { kind: 'apiKey', permission: 'vip:write' },
    body: VipBatchBody,
    ok: { description: 'The applied entries and the failures', json: VipBatchAnswer },
    errors: [404, 502, 504],
    async handle(ctx, { body: { oId, vips }, caller }, deps) {
      const { user } = await deps.userSync.sync(ctx.state.work, oId);
      const at = deps.clock.now();
      const commands: SubmitVip[] = [];
      const failures: Array<{ index: number; quality: unknown; expired: unknown; message: string }> = [];
      vips.forEach((entry, index) => {
        const result = v.safeParse(VipEntry, entry, { abortPipeEarly: true });
        if (result.success) {
          commands.push({ type: 'SubmitVip', userId: user.id, ...result.output, newRecordId: newRecordId(), at, ...actorOf(caller) });
        } else {
          const issue = describeIssues(result.issues)[0]!;
          const raw = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
          const field = issue.field === 'body' ? `vips[${index}]` : `vips[${index}].${issue.field}`;
          failures.push({ index, quality: raw.quality ?? null, expired: raw.expired ?? null, message: `${field}: ${issue.message}` });
        }
      });
      // One entry per accepted submission, in request order, each with the expiry it set (a quality
      // given twice answers twice: same record id, each entry's own expired).
      const answerOf = (records: VipState) => {
        const success = commands.map((c) => briefRecord(records[c.quality]!, c.expired));
        return {
          code: 0 as const,
          msg: failures.length === 0 ? 'success' : `${failures.length} of ${vips.length} entries failed`,
          data: { success, total: vips.length, succeed: success.length, failed: failures.length, failures },
        };
      };
      return commands.length > 0 ? submit(ctx, deps, user.id, commands, answerOf) : answerOf({});
    },
  }),
];
