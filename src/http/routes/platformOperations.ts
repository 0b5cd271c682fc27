// Spec §4.1–4.4: points, medals, items and liveness are the platform's; the service forwards
// them and records each write with its outcome.
import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { beforeAnyChange, ConflictError } from '../../domain/errors.js';
import type { ItemsEditRequested, MedalGiveRequested, MedalRemoveRequested, PointsEditRequested } from '../../domain/events.js';
import type { CallResult } from '../../services/platformOperations.js';
import type { HttpDeps } from '../deps.js';
import { requirePermission, type AuthState } from '../middleware/apiKey.js';
import type { IdempotencyState } from '../middleware/idempotency.js';
import { ItemsEditBody, ItemsQueryBody, MedalGiveBody, MedalRemoveBody, OIdParam, PointsEditBody } from '../schemas.js';
import { parse } from '../validation.js';

const applied = (message: string): CallResult => ({ applied: true, result: { message } });
export const actorOf = (ctx: ParameterizedContext<AuthState>) => ({ appId: ctx.state.actor.appId, keyId: ctx.state.actor.keyId });

/**
 * The platform's own end-to-end idempotency id for a points edit: derived from the client's
 * Idempotency-Key when it sent one (so its retries carry the same id), else the operation's id.
 */
function pointsRequestId(appId: string, operationId: string, idempotencyKey: string | undefined): string {
  return idempotencyKey ? `${appId}:${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40)}` : operationId;
}

export function platformOperationsRouter({ readModels, clock, userSync, operations, platform, pointsSource }: HttpDeps): Router<AuthState & IdempotencyState> {
  const router = new Router<AuthState & IdempotencyState>({ prefix: '/adm' });
  const allow = requirePermission.bind(null, readModels.apiKeys, clock);

  router.post('/points/edit', allow('points:edit'), async (ctx) => {
    const { oId, point, memo } = parse(PointsEditBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const { appId, app } = ctx.state.actor;
    const { message } = await operations.run<PointsEditRequested>('PointsEditRequested', actorOf(ctx), target, { point, memo }, async (operationId) => {
      const source = pointsSource
        ? { appId, appName: app.slice(0, 40), scene: point > 0 ? ('point_issue' as const) : ('payment' as const), requestId: pointsRequestId(appId, operationId, ctx.state.idempotencyKey) }
        : undefined;
      return applied(await platform.editPoints({ userName: target.userName, point, memo, ...(source && { source }) }));
    });
    ctx.body = { code: 0, msg: message };
  });

  router.post('/medal/give', allow('medal:give'), async (ctx) => {
    const { oId, ...medal } = parse(MedalGiveBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const { message } = await operations.run<MedalGiveRequested>('MedalGiveRequested', actorOf(ctx), target, medal, async () =>
      applied(await platform.giveMedal({ userName: target.userName, ...medal })),
    );
    ctx.body = { code: 0, msg: message };
  });

  router.post('/medal/remove', allow('medal:remove'), async (ctx) => {
    const { oId, name } = parse(MedalRemoveBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const { message } = await operations.run<MedalRemoveRequested>('MedalRemoveRequested', actorOf(ctx), target, { name }, async () =>
      applied(await platform.removeMedal({ userName: target.userName, name })),
    );
    ctx.body = { code: 0, msg: message };
  });

  router.post('/items/query', allow('items:query'), async (ctx) => {
    const { oId } = parse(ItemsQueryBody, ctx.request.body);
    const { userName } = await userSync.sync(oId);
    ctx.body = { code: 0, msg: 'success', data: await platform.queryItems(userName) };
  });

  router.post('/items/edit', allow('items:edit'), async (ctx) => {
    const { oId, item, sum } = parse(ItemsEditBody, ctx.request.body);
    const target = await userSync.sync(oId);
    const { message } = await operations.run<ItemsEditRequested>('ItemsEditRequested', actorOf(ctx), target, { item, sum }, async () => {
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
    ctx.body = { code: 0, msg: message };
  });

  router.get('/liveness/:oId', allow('liveness:read'), async (ctx) => {
    const { oId } = parse(OIdParam, ctx.params);
    const { userName } = await userSync.sync(oId);
    ctx.body = { code: 0, msg: 'success', liveness: await platform.liveness(userName) };
  });

  return router;
}
