// A console API endpoint declared once: method, path, the schemas of what it takes, and its
// handler; the mount validates the input (a 400 naming the field) and sends what it returns.
import Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import { koaBody } from 'koa-body';
import type * as v from 'valibot';
import { invalid, parse } from '../../http/validation.js';
import type { OperatorState } from '../guards.js';
import type { ConsoleDeps } from '../deps.js';

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

export type ConsoleContext = ParameterizedContext<OperatorState>;

export interface ConsoleEndpoint<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  method: 'get' | 'post';
  /** Under /console/api. */
  path: string;
  params?: P;
  query?: Q;
  body?: B;
  handle(ctx: ConsoleContext, input: { params: Out<P>; query: Out<Q>; body: Out<B> }, deps: ConsoleDeps): unknown;
}

export type AnyEndpoint = ConsoleEndpoint<any, any, any>;

export const endpoint = <P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined>(
  declaration: ConsoleEndpoint<P, Q, B>,
): AnyEndpoint => declaration;

const requireJson: Middleware = async (ctx, next) => {
  if (ctx.request.length && !ctx.is('application/json')) throw invalid('body', 'Content-Type must be application/json');
  await next();
};

/** The endpoints as routes of `router`, each behind `guards`. */
export function mountEndpoints(router: Router<OperatorState>, endpoints: readonly AnyEndpoint[], guards: Middleware<OperatorState>[], deps: ConsoleDeps): void {
  const body = koaBody({ json: true, jsonStrict: true, jsonLimit: '64kb', urlencoded: false, text: false, multipart: false, patchNode: false });
  for (const declared of endpoints) {
    const reading = declared.body ? [requireJson, body] : [];
    router.register(`/console/api${declared.path}`, [declared.method.toUpperCase()], [
      ...guards,
      ...(reading as Middleware<OperatorState>[]),
      async (ctx) => {
        const input = {
          params: declared.params && parse(declared.params, ctx.params),
          query: declared.query && parse(declared.query, ctx.query),
          body: declared.body && parse(declared.body, (ctx.request as { body?: unknown }).body ?? {}),
        };
        const answer = await declared.handle(ctx as ConsoleContext, input, deps);
        if (answer !== undefined) ctx.body = answer;
      },
    ]);
  }
}
