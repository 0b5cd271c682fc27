// Turns the route declarations into koa routes, each with the same chain in the same order:
// authenticate → authorize → (the platform key it needs, the rate limit) → read and bound the
// body → validate → replay or claim the Idempotency-Key → handle. Validation comes before the
// claim, so that a request refused for its input records nothing. Every step is attached to the
// route itself, so it applies to exactly the requests the router dispatches (paths match as
// declared: no case or trailing-slash variant reaches a handler past its chain). Steps that only
// check and pass on return next() rather than being async functions, one promise fewer each on
// every request; koa turns what they throw into a rejection all the same.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { missingKeyError, type GoldFingerKeys, type GoldFingerType } from '../community/goldFinger.js';
import { requirePermission } from './middleware/apiKey.js';
import { boundedBodyDepth } from './middleware/bodyDepth.js';
import { cors } from './middleware/cors.js';
import type { OnUnexpected, RenderError } from './middleware/errors.js';
import { idempotency } from './middleware/idempotency.js';
import { rateLimitByKey } from './middleware/rateLimit.js';
import { requireTrustedOrigin } from './middleware/trustedOrigin.js';
import type { Route, RouteContext, RouteDeps } from './route.js';
import { invalid, parse } from './validation.js';

/** Every body the API takes is JSON; anything else is refused rather than parsed as empty. */
const requireJson: Middleware = (ctx, next) => {
  if (ctx.request.length && !ctx.is('application/json')) throw invalid('body', 'Content-Type must be application/json');
  return next();
};

/** A setting missing on this service is said before anything is looked up or recorded. */
function requirePlatformKey(keys: GoldFingerKeys, type: GoldFingerType): Middleware {
  return (_ctx, next) => {
    if (!keys[type]) throw missingKeyError(type);
    return next();
  };
}

type Validated = { input?: Parameters<Route['handle']>[1] };

/** Validates what the route declares it takes (its schemas, then its own checks). */
function validatorOf(route: Route, deps: RouteDeps): Middleware<Validated> {
  return (ctx, next) => {
    const input = {
      params: route.params && parse(route.params, ctx.params),
      query: route.query && parse(route.query, ctx.query),
      body: route.body && parse(route.body, ctx.request.body),
      caller: (ctx.state as RouteContext['state']).actor,
    };
    route.check?.(input, deps);
    ctx.state.input = input;
    return next();
  };
}

/** Runs the route's handler on the validated input and sends what it returns. */
function handlerOf(route: Route, deps: RouteDeps): Middleware<Validated> {
  return async (ctx) => {
    const answer = await route.handle(ctx as unknown as RouteContext, ctx.state.input!, deps);
    if (answer !== undefined) ctx.body = answer;
  };
}

export function mountRoutes(routes: readonly Route[], deps: RouteDeps, errors: { renderError: RenderError; onUnexpected: OnUnexpected }): Router {
  const router = new Router({ sensitive: true, strict: true });
  const limit = deps.rateLimit ? [rateLimitByKey(deps.rateLimit)] : [];
  const body = koaBody({ json: true, jsonStrict: true, jsonLimit: deps.api.maxBodyBytes, urlencoded: false, text: false, multipart: false, patchNode: false });
  // Before anything walks the body (the Idempotency-Key's hash, validation, the store).
  const depth = boundedBodyDepth(deps.pushLimits.maxDepth);
  const claim = idempotency(deps.idempotency, deps.outcomes, errors.renderError, errors.onUnexpected);
  const allowOrigins = cors(deps.realtime.corsOrigins);
  const trustedOrigin = requireTrustedOrigin(deps.realtime.corsOrigins, deps.realtime.publicUrl);

  const chainOf = (route: Route): Middleware[] => {
    const { access } = route;
    const reading = route.body ? [requireJson, body, depth] : [];
    const validate = validatorOf(route, deps) as Middleware;
    if (access.kind === 'public') {
      const browser = access.browser === 'cors' ? [allowOrigins] : access.browser === 'cookieWrite' ? [allowOrigins, trustedOrigin] : [];
      return [...browser, ...reading, validate];
    }
    return [
      requirePermission(deps.readModels.apiKeys, deps.clock, access.permission) as Middleware,
      ...(access.platformKey ? [requirePlatformKey(deps.platformKeys, access.platformKey)] : []),
      ...limit,
      ...reading,
      validate,
      ...(route.method === 'post' ? [claim(route.keptAnswer) as Middleware] : []),
    ];
  };

  for (const route of routes) {
    router.register(route.path, [route.method.toUpperCase()], [...chainOf(route), handlerOf(route, deps) as Middleware]);
    if (route.access.kind === 'public' && route.access.browser) router.options(route.path, allowOrigins);
  }
  return router;
}
