// One declaration per endpoint: method, path, who may call it, the schemas of what it takes and
// answers, and its handler. The koa routes (src/http/mount.ts) and the OpenAPI document
// (src/http/openapi.ts) are both built from the same declarations, so neither can drift. The
// operator console's endpoints share the same core and mount, but not the document.
import type { Middleware, ParameterizedContext } from 'koa';
import type * as v from 'valibot';
import type { GoldFingerType } from '../community/goldFinger.js';
import type { Config } from '../config.js';
import type { Actor } from '../domain/events.js';
import type { Permission } from '../domain/permissions.js';
import type { HttpDeps } from './deps.js';
import type { AuthState } from './middleware/apiKey.js';
import type { ClaimedRequestState, KeptAnswer } from './middleware/idempotency.js';
import type { WorkState } from './middleware/requestLog.js';

export type Schema = v.GenericSchema;
export type JsonSchema = Record<string, unknown>;

export type Tag = 'points' | 'medals' | 'items' | 'liveness' | 'vip' | 'realtime' | 'sign-in' | 'audit' | 'webhooks' | 'presence' | 'meta';

/**
 * `apiKey`: the `apiKey` header with this permission (and the platform's key of this type, for
 * routes that call its admin endpoints). `public`: no key; `browser` routes answer pages on the
 * listed origins (CORS with credentials), and `cookieWrite` ones refuse pages on other origins.
 */
export type Access = { kind: 'apiKey'; permission: Permission; platformKey?: GoldFingerType } | { kind: 'public'; browser?: 'cors' | 'cookieWrite' };

/** One documented answer: a JSON body by its schema, and/or other media types by JSON Schema. */
export interface Answer<Body extends Schema | undefined = Schema | undefined> {
  description: string;
  json?: Body;
  media?: Record<string, JsonSchema>;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

/** The validated request: path parameters, query and body, each by its schema. */
export interface Input<P, Q, B> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
}

/** Who called an `apiKey` route: the app (its id and name), the key, and whether it reaches every app. */
export type Caller = Actor & { app: string; allApps: boolean };

/** Records of `appId` are the caller's to see and act on: its own app's, or any with an all-apps key. */
export const reaches = (caller: Caller, appId: string) => caller.allApps || caller.appId === appId;

/** The caller as recorded in the events its request causes. */
export const actorOf = ({ appId, keyId }: Caller): Actor => ({ appId, keyId });

export type RouteContext = ParameterizedContext<WorkState & Partial<AuthState> & ClaimedRequestState>;

/** What a handler has to work with, besides the request. */
export interface RouteDeps extends HttpDeps {
  /** The OpenAPI document of every declared route. */
  apiDocument(): JsonSchema;
}

type Handled<Result> = Result | Promise<Result>;

/**
 * What every endpoint declares, in the API or not: where it is, who may call it, the schemas of
 * what it takes, and its handler, which gets `Ctx` and `Deps`. The mount gives every endpoint
 * the same bounds (body size and depth, Content-Type, validation) in the same order.
 */
export interface Endpoint<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, A extends { kind: string }, Ctx, Deps, Result> {
  method: 'get' | 'post' | 'delete';
  /** koa-router syntax (`/adm/vip/:oId`), matched exactly: case and trailing slash included. */
  path: string;
  access: A;
  params?: P;
  query?: Q;
  body?: B;
  /** Checks beyond the schemas (bounds that depend on settings): throws a ValidationError. */
  check?(input: Input<P, Q, B>, deps: Deps): void;
  /** Returns the body to send, or nothing when it answered itself (ctx.body, a redirect, a stream). */
  handle(ctx: Ctx, input: Input<P, Q, B> & (A extends { kind: 'apiKey' } ? { caller: Caller } : object), deps: Deps): Handled<Result | undefined> | Handled<void>;
}

export interface RouteDeclaration<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, R extends Schema | undefined, A extends Access>
  extends Endpoint<P, Q, B, A, RouteContext, RouteDeps, Out<R>> {
  tag: Tag;
  summary: string;
  description?: string;
  /** Headers and query parameters the handler reads leniently itself (no schema to validate). */
  parameters?: Array<{ name: string; in: 'header' | 'query'; description: string; schema: JsonSchema }>;
  /** The 200 answer. A handler returning a value sends it as this JSON body. */
  ok: Answer<R>;
  /** Other answers of this route, by status, besides the errors its access and input imply. */
  answers?: Record<string, Answer>;
  /** Further error statuses (the `{code, message, data}` body) this route can answer. */
  errors?: number[];
  /** Served, but not part of the API (the documentation page's own files). */
  undocumented?: true;
  /** What an Idempotency-Key keeps of this route's answer, to answer a retry with (default: all of it). */
  keptAnswer?: KeptAnswer;
  /** Steps after the key's checks and before the body is read: bounds of the route's own (per app). */
  guards?: Middleware<AuthState>[];
}

/**
 * Any route, its schemas erased: what the mount and the document read of every declaration.
 * Methods compare bivariantly, so each typed declaration is one.
 */
export type Route = RouteDeclaration<Schema | undefined, Schema | undefined, Schema | undefined, Schema | undefined, Access>;

/** Declares a route; the generic parameters let the handler's input and answer be checked. */
export function route<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  R extends Schema | undefined = undefined,
  A extends Access = Access,
>(declaration: RouteDeclaration<P, Q, B, R, A>): Route {
  return declaration as unknown as Route;
}

/**
 * The operator console's endpoints (/console/api): an operator's session, checked by the guards
 * the console mounts them behind. Not part of the API: no `Route`, so never in the document.
 */
export type OperatorAccess = { kind: 'operator' };

export type OperatorRoute<Ctx, Deps> = Endpoint<Schema | undefined, Schema | undefined, Schema | undefined, OperatorAccess, Ctx, Deps, unknown>;

/** The declaring function of operator routes over one context and deps; the schemas type each handler's input. */
export function operatorRoutes<Ctx, Deps>() {
  return <P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined>(
    declaration: Omit<Endpoint<P, Q, B, OperatorAccess, Ctx, Deps, unknown>, 'access'>,
  ): OperatorRoute<Ctx, Deps> => ({ ...declaration, access: { kind: 'operator' } });
}

/** A size as people write it: `1 MiB`, `64 KiB`, `1000 bytes`. */
export const formatBytes = (bytes: number) => (bytes % 1_048_576 === 0 ? `${bytes / 1_048_576} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`);

/** Bodies are JSON of at most this many bytes (413 past it). */
const MAX_BODY_BYTES = 1024 * 1024;

/** Settings that shape what the API says about itself (limits, lifetimes, where it lives). */
export interface ApiSettings {
  /** The login page's path segment (COMMUNITY_NAME). */
  communityName: string;
  /** Where browsers reach the service (PUBLIC_URL, or where it listens): the document's server. */
  publicUrl(): string;
  idempotencyTtlMs: number;
  maxBodyBytes: number;
  push: Config['push'];
  replayMs: number;
  rateLimit: { perSecond: number; burst: number } | undefined;
}

export function apiSettings(config: Config, publicUrl: () => string): ApiSettings {
  return {
    communityName: config.community.name,
    publicUrl,
    idempotencyTtlMs: config.idempotencyTtlMs,
    maxBodyBytes: MAX_BODY_BYTES,
    push: config.push,
    replayMs: config.realtime.replayMs,
    rateLimit: config.rateLimit,
  };
}
