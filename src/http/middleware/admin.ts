// The chain every admin route runs, attached to the route itself so that each step applies to
// exactly the requests the router dispatches (no path comparisons of its own): authenticate and
// authorize (before the body is read: without a valid key nothing about the body is judged), the
// platform key the route needs, rate limit, read the JSON body and bound its depth, then claim
// the Idempotency-Key (so a replay needs the permission).
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { missingKeyError, type GoldFingerKeys, type GoldFingerType } from '../../community/goldFinger.js';
import type { Permission } from '../../domain/permissions.js';
import type { HttpDeps } from '../deps.js';
import { invalid } from '../validation.js';
import { requirePermission, type AuthState } from './apiKey.js';
import type { OnUnexpected } from './errors.js';
import { boundedBodyDepth } from './bodyDepth.js';
import { idempotency, type IdempotencyState } from './idempotency.js';
import { rateLimitByKey } from './rateLimit.js';

export const MAX_BODY = '1mb';

export type AdminState = AuthState & IdempotencyState;

export interface AdminGuards {
  /** `platformKey`: the gold-finger key the route's platform call needs. */
  read(permission: Permission, platformKey?: GoldFingerType): Middleware<AdminState>[];
  write(permission: Permission, platformKey?: GoldFingerType): Middleware<AdminState>[];
}

/** Every body the API takes is JSON; anything else is refused rather than parsed as empty. */
const requireJson: Middleware = async (ctx, next) => {
  if (ctx.request.length && !ctx.is('application/json')) throw invalid('body', 'Content-Type must be application/json');
  await next();
};

/** A setting missing on this service is said before anything is looked up or recorded. */
function requirePlatformKey(keys: GoldFingerKeys, type: GoldFingerType): Middleware {
  return async (_ctx, next) => {
    if (!keys[type]) throw missingKeyError(type);
    await next();
  };
}

export function adminGuards(deps: HttpDeps, onUnexpected: OnUnexpected): AdminGuards {
  const limit = deps.rateLimit ? [rateLimitByKey(deps.rateLimit)] : [];
  const body = koaBody({ json: true, jsonStrict: true, jsonLimit: MAX_BODY, urlencoded: false, text: false, multipart: false, patchNode: false });
  // Before anything walks the body (the Idempotency-Key's hash, validation, the store).
  const depth = boundedBodyDepth(deps.pushLimits.maxDepth);
  const claim = idempotency(deps.idempotency, deps.readModels.operations, onUnexpected);
  const authorize = (permission: Permission, platformKey: GoldFingerType | undefined): Middleware[] => [
    requirePermission(deps.readModels.apiKeys, deps.clock, permission) as Middleware,
    ...(platformKey ? [requirePlatformKey(deps.platformKeys, platformKey)] : []),
  ];
  return {
    read: (permission, platformKey) => [...authorize(permission, platformKey), ...limit] as Middleware<AdminState>[],
    write: (permission, platformKey) => [...authorize(permission, platformKey), ...limit, requireJson, body, depth, claim] as Middleware<AdminState>[],
  };
}
