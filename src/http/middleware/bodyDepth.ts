// Every JSON body is measured before anything walks it recursively (the idempotency hash's
// canonical form, the schemas, the store's serialisation): a body nested too deep is a 400 that
// names the top-level field holding the depth, never a stack overflow and a 500.
import type { Middleware } from 'koa';
import { exceedsDepth } from '../../domain/jsonBounds.js';
import { invalid } from '../validation.js';

/** `maxDepth` applies to each top-level field's value (a push's `data` is the deepest one). */
export function boundedBodyDepth(maxDepth: number): Middleware {
  return (ctx, next) => {
    const body: unknown = ctx.request.body;
    if (body !== null && typeof body === 'object') {
      if (Array.isArray(body)) {
        if (exceedsDepth(body, maxDepth + 1)) throw invalid('body', `must be nested at most ${maxDepth + 1} levels deep`);
      } else {
        for (const [field, value] of Object.entries(body)) {
          if (exceedsDepth(value, maxDepth)) throw invalid(field, `must be nested at most ${maxDepth} levels deep`);
        }
      }
    }
    return next();
  };
}
