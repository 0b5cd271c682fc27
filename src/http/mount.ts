// Turns endpoint declarations into koa routes, each with the same chain in the same order: who
// may call it (for the API: authenticate → authorize → the platform key it needs, the rate
// limit, the app's requests in progress; for the console: the operator's session and page) → read and bound the body → validate
// → (the API's POSTs: replay or claim the Idempotency-Key) → handle. Validation comes before the
// claim, so that a request refused for its input records nothing. Every step is attached to the
// route itself, so it applies to exactly the requests the router dispatches (paths match as
// declared: no case or trailing-slash variant reaches a handler past its chain). Steps that only
// check and pass return next() rather than being async functions, so they add no promise of
// their own to every request; koa turns what they throw into a rejection all the same.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { missingKeyError, type GoldFingerKeys, type GoldFingerType } from '../community/goldFinger.js';
import type { HttpDeps } from './deps.js';
import { requirePermission } from './middleware/apiKey.js';
import { boundedBodyDepth } from './middleware/bodyDepth.js';
import { cors } from './middleware/cors.js';
import type { OnUnexpected, RenderError } from './middleware/errors.js';
import { idempotency } from './middleware/idempotency.js';
import { jsonBody } from './middleware/jsonBody.js';
import { rateLimitByKey } from './middleware/rateLimit.js';
import { requireTrustedOrigin } from './middleware/trustedOrigin.js';
import type { Endpoint, OperatorRoute, Route, RouteDeps, Schema } from './route.js';
import { parse } from './validation.js';

/** A setting missing on this service is said before anything is looked up or recorded. */
function requirePlatformKey(keys: GoldFingerKeys, type: GoldFingerType): Middleware {
  return (_ctx, next) => {
    if (!keys[type]) throw missingKeyError(type);
    return next();
  };
}

/** Any endpoint over `Deps`, its schemas and context erased (its methods compare bivariantly). */
type AnyEndpoint<Deps> = Endpoint<Schema | undefined, Schema | undefined, Schema | undefined, { kind: string }, unknown, Deps, unknown>;

type Validated = { input?: Parameters<AnyEndpoint<unknown>['handle']>[1] };

/** Validates what the endpoint declares it takes (its schemas, then its own checks). */
function validatorOf<Deps>(endpoint: AnyEndpoint<Deps>, deps: Deps): Middleware<Validated> {
  return (ctx, next) => {
    const input = {
      params: endpoint.params && parse(endpoint.params, ctx.params),
      query: endpoint.query && parse(endpoint.query, ctx.query),
      body: endpoint.body && parse(endpoint.body, ctx.request.body),
      caller: (ctx.state as { actor?: unknown }).actor,
    };
    endpoint.check?.(input, deps);
    ctx.state.input = input;
    return next();
  };
}

/** Runs the endpoint's handler on the validated input and sends what it returns. */
function handlerOf<Deps>(endpoint: AnyEndpoint<Deps>, deps: Deps): Middleware<Validated> {
  return async (ctx) => {
    const answer = await endpoint.handle(ctx, ctx.state.input!, deps);
    if (answer !== undefined) ctx.body = answer;
  };
}

/** Where the body bounds come from: the API's body size and the push depth, which bounds every body. */
type BoundsDeps = Pick<HttpDeps, 'api' | 'pushLimits'>;

/** What an endpoint's access adds to its chain: before the body is read, and between validation and the handler. */
interface AccessSteps {
  guards: Middleware[];
  afterValidation?: Middleware[];
}

/** Registers each endpoint on `router`: its guards → read and bound the body → validate → its steps after validation → handle. */
function mountEndpoints<State, Deps extends BoundsDeps, E extends AnyEndpoint<Deps>>(
  router: Router<State>,
  endpoints: readonly E[],
  deps: Deps,
  stepsOf: (endpoint: E) => AccessSteps,
): void {
  // Every body an endpoint takes is JSON, bounded in size and then in depth, before anything walks
  // it (the Idempotency-Key's hash, validation, the store).
  const reading = [jsonBody(deps.api.maxBodyBytes), boundedBodyDepth(deps.pushLimits.maxDepth)];
  for (const endpoint of endpoints) {
    const { guards, afterValidation = [] } = stepsOf(endpoint);
    router.register(
      endpoint.path,
      [endpoint.method.toUpperCase()],
      [...guards, ...(endpoint.body ? reading : []), validatorOf(endpoint, deps) as Middleware, ...afterValidation, handlerOf(endpoint, deps) as Middleware],
    );
  }
}

export function mountRoutes(routes: readonly Route[], deps: RouteDeps, errors: { renderError: RenderError; onUnexpected: OnUnexpected }): Router {
  const router = new Router({ sensitive: true, strict: true });
  const limit = deps.rateLimit ? [rateLimitByKey(deps.rateLimit)] : [];
  const claim = idempotency(deps.idempotency, deps.outcomes, errors.renderError, errors.onUnexpected);
  const allowOrigins = cors(deps.realtime.corsOrigins);
  const trustedOrigin = requireTrustedOrigin(deps.realtime.corsOrigins, deps.realtime.publicUrl);

  const stepsOf = (route: Route): AccessSteps => {
    const { access } = route;
    if (access.kind === 'public') {
      return { guards: access.browser === 'cors' ? [allowOrigins] : access.browser === 'cookieWrite' ? [allowOrigins, trustedOrigin] : [] };
    }
    return {
      guards: [
        requirePermission(deps.readModels.apiKeys, deps.clock, access.permission) as Middleware,
        ...(access.platformKey ? [requirePlatformKey(deps.platformKeys, access.platformKey)] : []),
        ...limit,
        ...((route.guards ?? []) as Middleware[]),
      ],
      afterValidation: route.method === 'post' ? [claim(route.keptAnswer) as Middleware] : [],
    };
  };

  mountEndpoints(router, routes, deps, stepsOf);
  for (const route of routes) if (route.access.kind === 'public' && route.access.browser) router.options(route.path, allowOrigins);
  return router;
}

/**
 * The operator console's endpoints on its router, each behind `guards` (the operator's session
 * and page checks) and held to every bound the API's routes are.
 */
export function mountOperatorRoutes<State, Ctx, Deps extends BoundsDeps>(
  router: Router<State>,
  routes: readonly OperatorRoute<Ctx, Deps>[],
  guards: Middleware<State>[],
  deps: Deps,
): void {
  mountEndpoints(router, routes, deps, () => ({ guards }));
}
