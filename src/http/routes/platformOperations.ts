// Spec §4.1–4.4: points, medals, items and liveness are the platform's; the service forwards
// them and records each write with its outcome.
import { createHash } from 'node:crypto';
import { beforeAnyChange, ConflictError } from '../../domain/errors.js';
import type { ItemsEditRequested, MedalGiveRequested, MedalRemoveRequested, PointsEditRequested } from '../../domain/events.js';
import type { CallResult } from '../../services/platformOperations.js';
import type { HttpDeps } from '../deps.js';
import type { AdminGuards, AdminState } from '../middleware/admin.js';
import { exactRouter } from '../router.js';
import { actorOf } from './actor.js';
import { ItemsEditBody, ItemsQueryBody, MedalGiveBody, MedalRemoveBody, OIdParam, PointsEditBody } from '../schemas.js';
import { operationAnswer } from '../responses.js';
import { parse } from '../validation.js';

const applied = (message: string): CallResult => ({ applied: true, result: { message } });

/**
 * The platform's own end-to-end idempotency id for a points edit: derived from the client's
 * Idempotency-Key when it sent one (so its retries carry the same id), else the operation's id.
 */
function pointsRequestId(appId: string, operationId: string, idempotencyKey: string | undefined): string {
  return idempotencyKey ? `${appId}:${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40)}` : operationId;
}

export function platformOperationsRouter({ userSync, operations, platform, pointsSource }: HttpDeps, guards: AdminGuards) {
  const router = exactRouter<AdminState>('/adm');

  router.post('/points/edit', ...guards.write('points:edit', 'point'), async (ctx) => {
    const { oId, point, memo } = parse(PointsEditBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const { appId, app } = ctx.state.actor;
    const intent = { type: 'PointsEditRequested', actor: actorOf(ctx), target, request: { point, memo }, claim: ctx.state.operationClaim } as const;
    const { message } = await operations.run<PointsEditRequested>(intent, async (operationId) => {
      const source = pointsSource
        ? { appId, appName: app.slice(0, 40), scene: point > 0 ? ('point_issue' as const) : ('payment' as const), requestId: pointsRequestId(appId, operationId, ctx.state.idempotencyKey) }
        : undefined;
      return applied(await platform.editPoints({ userName: target.userName, point, memo, ...(source && { source }) }));
    });
    ctx.body = operationAnswer(message);
  });

  router.post('/medal/give', ...guards.write('medal:give', 'metal'), async (ctx) => {
    const { oId, ...medal } = parse(MedalGiveBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const intent = { type: 'MedalGiveRequested', actor: actorOf(ctx), target, request: medal, claim: ctx.state.operationClaim } as const;
    const { message } = await operations.run<MedalGiveRequested>(intent, async () => applied(await platform.giveMedal({ userName: target.userName, ...medal })));
    ctx.body = operationAnswer(message);
  });

  router.post('/medal/remove', ...guards.write('medal:remove', 'metal'), async (ctx) => {
    const { oId, name } = parse(MedalRemoveBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const intent = { type: 'MedalRemoveRequested', actor: actorOf(ctx), target, request: { name }, claim: ctx.state.operationClaim } as const;
    const { message } = await operations.run<MedalRemoveRequested>(intent, async () => applied(await platform.removeMedal({ userName: target.userName, name })));
    ctx.body = operationAnswer(message);
  });

  router.post('/items/query', ...guards.write('items:query', 'item'), async (ctx) => {
    const { oId } = parse(ItemsQueryBody, ctx.request.body);
    const { userName } = await userSync.sync(oId);
    ctx.body = { code: 0, msg: 'success', data: await platform.queryItems(userName) };
  });

  router.post('/items/edit', ...guards.write('items:edit', 'item'), async (ctx) => {
    const { oId, item, sum } = parse(ItemsEditBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const intent = { type: 'ItemsEditRequested', actor: actorOf(ctx), target, request: { item, sum }, claim: ctx.state.operationClaim } as const;
    const { message } = await operations.run<ItemsEditRequested>(intent, async () => {
      // The platform ignores a deduction below zero and still reports success: look first,
      // and compare the bag it returns, so the caller never gets a false success.
      const before = sum < 0 ? ((await beforeAnyChange(platform.queryItems(target.userName)))[item] ?? 0) : undefined;
      if (before !== undefined && before + sum < 0) {
        throw new ConflictError(`sum: user ${oId} has ${before} of ${item}, cannot deduct ${-sum}`);
      }
      const { message, bag } = await platform.editItems({ userName: target.userName, item, sum });
      if (before !== undefined && (bag[item] ?? 0) === before) {
        return { applied: false, conflict: `sum: the platform did not deduct ${-sum} of ${item} from user ${oId} (not enough left)` };
      }
      return { applied: true, result: { message, bag } };
    });
    ctx.body = operationAnswer(message);
  });

  router.get('/liveness/:oId', ...guards.read('liveness:read', 'liveness'), async (ctx) => {
    const { oId } = parse(OIdParam, ctx.params);
    const { userName } = await userSync.sync(oId);
    ctx.body = { code: 0, msg: 'success', liveness: await platform.liveness(userName) };
  });

  return router;
}
