// Spec §4.5: VIP records are the service's own truth, decided by the VIP decider.
import * as v from 'valibot';
import { batchOf } from '../../domain/decider.js';
import { streams } from '../../domain/events.js';
import { toSpecTimestamp } from '../../domain/time.js';
import { vipDecider, type SubmitVip, type VipRecord } from '../../domain/vip.js';
import { handleCommand } from '../../services/commandHandler.js';
import { newRecordId } from '../../system/ids.js';
import type { HttpDeps } from '../deps.js';
import type { AdminGuards, AdminState } from '../middleware/admin.js';
import { exactRouter } from '../router.js';
import { OIdParam, VipBatchBody, VipEntry, VipSubmitBody } from '../schemas.js';
import { describeIssues, parse } from '../validation.js';
import { actorOf } from './actor.js';

const submitBatch = batchOf(vipDecider);

function briefRecord(record: VipRecord) {
  return { id: record.id, userId: record.userId, quality: record.quality, expired: toSpecTimestamp(record.expired) };
}

function fullRecord(record: VipRecord) {
  return { ...briefRecord(record), created: toSpecTimestamp(record.created), updated: toSpecTimestamp(record.updated) };
}

export function vipRouter({ store, runner, readModels, clock, userSync }: HttpDeps, guards: AdminGuards) {
  const router = exactRouter<AdminState>('/adm/vip');

  async function submit(userId: string, commands: SubmitVip[]): Promise<void> {
    const { position } = await handleCommand(store, streams.vip(userId), submitBatch, commands);
    if (position !== undefined) await runner.waitFor(position);
  }

  router.get('/:oId', ...guards.read('vip:read'), async (ctx) => {
    const { oId } = parse(OIdParam, ctx.params);
    const { user } = await userSync.sync(oId);
    ctx.body = { code: 0, msg: 'success', data: readModels.vip.records(user.id).map(fullRecord) };
  });

  router.post('/submit', ...guards.write('vip:write'), async (ctx) => {
    const { oId, quality, expired } = parse(VipSubmitBody, ctx.request.body);
    const { user } = await userSync.sync(oId);
    const at = clock.now();
    await submit(user.id, [{ type: 'SubmitVip', userId: user.id, quality, expired, newRecordId: newRecordId(), at, ...actorOf(ctx) }]);
    const record = readModels.vip.records(user.id).find((r) => r.quality === quality)!;
    ctx.body = { code: 0, msg: 'success', data: fullRecord(record) };
  });

  router.post('/batch-submit', ...guards.write('vip:write'), async (ctx) => {
    const { oId, vips } = parse(VipBatchBody, ctx.request.body);
    const { user } = await userSync.sync(oId);
    const at = clock.now();
    const commands: SubmitVip[] = [];
    const failures: Array<{ index: number; quality: unknown; expired: unknown; message: string }> = [];
    vips.forEach((entry, index) => {
      const result = v.safeParse(VipEntry, entry, { abortPipeEarly: true });
      if (result.success) {
        commands.push({ type: 'SubmitVip', userId: user.id, ...result.output, newRecordId: newRecordId(), at, ...actorOf(ctx) });
      } else {
        const issue = describeIssues(result.issues)[0]!;
        const raw = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
        const field = issue.field === 'body' ? `vips[${index}]` : `vips[${index}].${issue.field}`;
        failures.push({ index, quality: raw.quality ?? null, expired: raw.expired ?? null, message: `${field}: ${issue.message}` });
      }
    });
    if (commands.length > 0) await submit(user.id, commands);
    const records = readModels.vip.records(user.id);
    // One entry per accepted submission, in request order, each with the expiry it set (a quality
    // given twice answers twice: same record id, each entry's own expired).
    const success = commands.map((c) => ({ ...briefRecord(records.find((r) => r.quality === c.quality)!), expired: toSpecTimestamp(c.expired) }));
    ctx.body = {
      code: 0,
      msg: failures.length === 0 ? 'success' : `${failures.length} of ${vips.length} entries failed`,
      data: { success, total: vips.length, succeed: success.length, failed: failures.length, failures },
    };
  });

  return router;
}
