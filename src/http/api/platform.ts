// Points, medals, items and liveness are the platform's; the service forwards them and records
// each write with its outcome.
import { hash } from 'node:crypto';
import { beforeAnyChange, ConflictError } from '../../domain/errors.js';
import type { ItemsEditRequested, MedalGiveRequested, MedalRemoveRequested, PointsEditRequested } from '../../domain/events.js';
import type { CallResult } from '../../services/platformOperations.js';
import { ItemsBody, LivenessBody, OperationAnswer, operationAnswer, SuccessBody } from '../../contract/answers.js';
import { actorOf, route, type Caller, type RouteContext } from '../route.js';
import { ItemsEditBody, ItemsQueryBody, MedalGiveBody, MedalRemoveBody, OIdParam, PointsEditBody } from '../../contract/requests.js';

const applied = (message: string): CallResult => ({ applied: true, result: { message } });

/** The platform can fail a forwarded call in every way: refuse, fail, not answer. */
const PLATFORM_ERRORS = [404, 422, 502, 504];

/**
 * The platform's own end-to-end idempotency id for a points edit: derived from the client's
 * Idempotency-Key when it sent one (so its retries carry the same id), else the operation's id.
 */
function pointsRequestId(appId: string, operationId: string, idempotencyKey: string | undefined): string {
  return idempotencyKey ? `${appId}:${hash('sha256', idempotencyKey, 'hex').slice(0, 40)}` : operationId;
}

/** The intent every forwarded write records, and the Idempotency-Key it binds. */
const intentOf = (ctx: RouteContext, caller: Caller) => ({ work: ctx.state.work, actor: actorOf(caller), claim: ctx.state.operationClaim });

export const platformRoutes = [
  route({
    method: 'post',
    path: '/adm/points/edit',
    tag: 'points',
    summary: 'Add or deduct points',
    description:
      'A deduction may take the balance below zero: the platform allows it, unless its newer builds check it (`COMMUNITY_POINTS_SOURCE=true` sends the fields they need).',
    access: { kind: 'apiKey', permission: 'points:edit', platformKey: 'point' },
    body: PointsEditBody,
    ok: { description: "Applied; `msg` is the platform's message, `data.transactionId` the transaction id it names", json: OperationAnswer },
    errors: PLATFORM_ERRORS,
    async handle(ctx, { body: { oId, point, memo }, caller }, { userSync, operations, platform, pointsSource }) {
      const target = await userSync.sync(ctx.state.work, oId);
      const intent = { type: 'PointsEditRequested', target, request: { point, memo }, ...intentOf(ctx, caller) } as const;
      const { message } = await operations.run<PointsEditRequested>(intent, async (operationId) => {
        const source = pointsSource
          ? {
              appId: caller.appId,
              appName: caller.app.slice(0, 40),
              scene: point > 0 ? ('point_issue' as const) : ('payment' as const),
              requestId: pointsRequestId(caller.appId, operationId, ctx.state.idempotencyKey),
            }
          : undefined;
        return applied(await platform.editPoints({ userName: target.userName, point, memo, ...(source && { source }) }));
      });
      return operationAnswer(message);
    },
  }),

  route({
    method: 'post',
    path: '/adm/medal/give',
    tag: 'medals',
    summary: 'Give a medal',
    access: { kind: 'apiKey', permission: 'medal:give', platformKey: 'metal' },
    body: MedalGiveBody,
    ok: { description: 'Applied', json: SuccessBody },
    errors: PLATFORM_ERRORS,
    async handle(ctx, { body: { oId, ...medal }, caller }, { userSync, operations, platform }) {
      const target = await userSync.sync(ctx.state.work, oId);
      const intent = { type: 'MedalGiveRequested', target, request: medal, ...intentOf(ctx, caller) } as const;
      const { message } = await operations.run<MedalGiveRequested>(intent, async () => applied(await platform.giveMedal({ userName: target.userName, ...medal })));
      return { code: 0 as const, msg: message };
    },
  }),

  route({
    method: 'post',
    path: '/adm/medal/remove',
    tag: 'medals',
    summary: 'Remove a medal',
    description: 'Succeeds also when the user did not have the medal (the platform answers so).',
    access: { kind: 'apiKey', permission: 'medal:remove', platformKey: 'metal' },
    body: MedalRemoveBody,
    ok: { description: 'Applied', json: SuccessBody },
    errors: PLATFORM_ERRORS,
    async handle(ctx, { body: { oId, name }, caller }, { userSync, operations, platform }) {
      const target = await userSync.sync(ctx.state.work, oId);
      const intent = { type: 'MedalRemoveRequested', target, request: { name }, ...intentOf(ctx, caller) } as const;
      const { message } = await operations.run<MedalRemoveRequested>(intent, async () => applied(await platform.removeMedal({ userName: target.userName, name })));
      return { code: 0 as const, msg: message };
    },
  }),

  route({
    method: 'post',
    path: '/adm/items/query',
    tag: 'items',
    summary: "Read a user's item bag",
    access: { kind: 'apiKey', permission: 'items:query', platformKey: 'item' },
    body: ItemsQueryBody,
    ok: { description: 'The bag: item name → quantity (`{}` when empty)', json: ItemsBody },
    errors: PLATFORM_ERRORS,
    async handle(ctx, { body: { oId } }, { userSync, platform }) {
      const { userName } = await userSync.sync(ctx.state.work, oId);
      return { code: 0 as const, msg: 'success', data: await platform.queryItems(userName) };
    },
  }),

  route({
    method: 'post',
    path: '/adm/items/edit',
    tag: 'items',
    summary: 'Add or deduct items',
    description:
      'A deduction the user cannot afford is refused with 409 and changes nothing. A deduction counts as applied only when the bag the platform returns moved by exactly `sum`; any other move (another edit of the same item at the same moment) is an unknown outcome.',
    access: { kind: 'apiKey', permission: 'items:edit', platformKey: 'item' },
    body: ItemsEditBody,
    ok: { description: 'Applied', json: SuccessBody },
    errors: [...PLATFORM_ERRORS, 409],
    async handle(ctx, { body: { oId, item, sum }, caller }, { userSync, operations, platform }) {
      const target = await userSync.sync(ctx.state.work, oId);
      const intent = { type: 'ItemsEditRequested', target, request: { item, sum }, ...intentOf(ctx, caller) } as const;
      const { message } = await operations.run<ItemsEditRequested>(intent, async () => {
        // The platform ignores a deduction below zero and still reports success: look first,
        // and compare the bag it returns, so the caller never gets a false success.
        const before = sum < 0 ? ((await beforeAnyChange(platform.queryItems(target.userName)))[item] ?? 0) : undefined;
        if (before !== undefined && before + sum < 0) {
          throw new ConflictError(`sum: user ${oId} has ${before} of ${item}, cannot deduct ${-sum}`);
        }
        const { message, bag } = await platform.editItems({ userName: target.userName, item, sum });
        const after = bag[item] ?? 0;
        // The platform does not say whether it deducted: only a move of exactly `sum` says so. Any
        // other (an edit of the same item by someone else meanwhile) cannot tell either way.
        if (before !== undefined && after - before !== sum) {
          return { applied: 'unknown', reason: `the bag's ${item} went from ${before} to ${after} around a deduction of ${-sum}, so whether it was deducted is not known` };
        }
        return { applied: true, result: { message, bag } };
      });
      return { code: 0 as const, msg: message };
    },
  }),

  route({
    method: 'get',
    path: '/adm/liveness/:oId',
    tag: 'liveness',
    summary: "Read a user's liveness (activity score)",
    access: { kind: 'apiKey', permission: 'liveness:read', platformKey: 'liveness' },
    params: OIdParam,
    ok: { description: 'The liveness', json: LivenessBody },
    errors: [404, 502, 504],
    async handle(ctx, { params: { oId } }, { userSync, platform }) {
      const { userName } = await userSync.sync(ctx.state.work, oId);
      return { code: 0 as const, msg: 'success', liveness: await platform.liveness(userName) };
    },
  }),
];
