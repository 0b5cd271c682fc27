import Router from '@koa/router';

/**
 * A router that matches paths exactly as the spec writes them: `/ADM/points/edit` or a trailing
 * slash is no route, so no variant of a path can reach a handler past its route's chain.
 */
export function exactRouter<State>(prefix?: string): Router<State> {
  return new Router<State>({ ...(prefix !== undefined && { prefix }), sensitive: true, strict: true });
}
