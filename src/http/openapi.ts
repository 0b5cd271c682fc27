// The OpenAPI 3.1 document of every declared route (src/http/api). Request and answer schemas
// are the very valibot schemas the handlers validate with and answer in (src/contract);
// @valibot/to-json-schema turns them into JSON Schema 2020-12, the dialect of OpenAPI 3.1.
// What JSON Schema cannot say (a trim, the date transform, a custom check) is ignored by the
// converter and stated in a description instead. The document is written for generators too:
// free-form objects allow any property, and a request field with a default stays optional.
// Errors are typed per status: `data` is one schema per `reason`, a oneOf with a discriminator,
// so that generators for any language keep each reason's fields. Examples are answers the
// service gives, and requests that work against `npm run dev` (its users, alice first).
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema, type OverrideActionContext, type OverrideSchemaContext } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import * as answers from '../contract/answers.js';
import { API_ERROR_STATUSES, ERROR_REASONS, reasonsOf, type ErrorDataOf, type ErrorReason } from '../contract/answers.js';
import * as requests from '../contract/requests.js';
import { version } from '../version.js';
import { MISSING_PERMISSION_HEADER } from './middleware/errors.js';
import { formatBytes, type Answer, type ApiSettings, type Route, type Schema } from './route.js';

type Json = Record<string, unknown>;

/** Every schema the document names, by component name (refs are `#/components/schemas/<name>`). */
const COMPONENTS = {
  OId: requests.OId,
  VipQuality: requests.VipQuality,
  SpecDateTime: requests.SpecDateTime,
  SpecTimestamp: answers.SpecTimestamp,
  PointsEditBody: requests.PointsEditBody,
  MedalGiveBody: requests.MedalGiveBody,
  MedalRemoveBody: requests.MedalRemoveBody,
  ItemsQueryBody: requests.ItemsQueryBody,
  ItemsEditBody: requests.ItemsEditBody,
  VipEntry: requests.VipEntry,
  VipSubmitBody: requests.VipSubmitBody,
  VipBatchBody: requests.VipBatchBody,
  MessagePushBody: requests.MessagePushBody,
  ResolveBody: requests.ResolveBody,
  WebhookCreateBody: requests.WebhookCreateBody,
  SuccessBody: answers.SuccessBody,
  OperationAnswer: answers.OperationAnswer,
  PushAnswer: answers.PushAnswer,
  ErrorBody: answers.ErrorBody,
  InvalidApiKeyBody: answers.InvalidApiKeyBody,
  PermissionDeniedBody: answers.PermissionDeniedBody,
  ItemsBody: answers.ItemsBody,
  LivenessBody: answers.LivenessBody,
  VipRecord: answers.VipRecord,
  VipListBody: answers.VipListBody,
  VipSubmitAnswer: answers.VipSubmitAnswer,
  VipBatchAnswer: answers.VipBatchAnswer,
  UserGetAnswer: answers.UserGetAnswer,
  ClientNotFoundBody: answers.ClientNotFoundBody,
  ResolveAnswer: answers.ResolveAnswer,
  OperationEntry: answers.OperationEntry,
  OperationListAnswer: answers.OperationListAnswer,
  ServiceBody: answers.ServiceBody,
  HealthBody: answers.HealthBody,
  ReadyBody: answers.ReadyBody,
  NotReadyBody: answers.NotReadyBody,
  PointsAuditEntry: answers.PointsAuditEntry,
  PointsAuditPage: answers.PointsAuditPage,
  VipAuditEntry: answers.VipAuditEntry,
  VipAuditPage: answers.VipAuditPage,
  MedalAuditEntry: answers.MedalAuditEntry,
  MedalAuditPage: answers.MedalAuditPage,
  ItemsAuditEntry: answers.ItemsAuditEntry,
  ItemsAuditPage: answers.ItemsAuditPage,
  RealtimeUser: answers.RealtimeUser,
  PbConnectFrame: answers.PbConnectFrame,
  LoginFrame: answers.LoginFrame,
  MessageFrame: answers.MessageFrame,
  WebhookEndpoint: answers.WebhookEndpoint,
  WebhookCreated: answers.WebhookCreated,
  WebhookAnswer: answers.WebhookAnswer,
  WebhookList: answers.WebhookList,
  WebhookRotated: answers.WebhookRotated,
  WebhookDeletedAnswer: answers.WebhookDeletedAnswer,
  WebhookAttempt: answers.WebhookAttempt,
  WebhookAttempts: answers.WebhookAttempts,
  WebhookResent: answers.WebhookResent,
  PresenceEntry: answers.PresenceEntry,
  PresencePage: answers.PresencePage,
  PresenceAnswer: answers.PresenceAnswer,
} satisfies Record<string, Schema>;

const pascal = (reason: string) => reason.replace(/(?:^|_)([a-z])/g, (_, c: string) => c.toUpperCase());
/** The component of one reason's `data` (`OutcomeUnknownData`). */
const dataComponent = (reason: ErrorReason) => `${pascal(reason)}Data`;
/** The component of one status's error body (`Error504`). */
const errorComponent = (status: number) => `Error${status}`;

/** The reasons the API answers with (the console's own are not part of this document). */
const API_REASONS = API_ERROR_STATUSES.flatMap((status) => reasonsOf(status)).filter((reason, i, all) => all.indexOf(reason) === i);

const ERROR_COMPONENTS: Record<string, Schema> = {
  ...Object.fromEntries(API_REASONS.map((reason) => [dataComponent(reason), ERROR_REASONS[reason].data])),
  ...Object.fromEntries(API_ERROR_STATUSES.map((status) => [errorComponent(status), answers.ErrorBodies[status]!])),
};
const ALL_COMPONENTS: Record<string, Schema> = { ...COMPONENTS, ...ERROR_COMPONENTS };
type ComponentName = keyof typeof COMPONENTS;

const NAMES = new Map<Schema, string>(Object.entries(ALL_COMPONENTS).map(([name, schema]) => [schema, name]));
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function jsonTypeOf(value: v.Literal): 'string' | 'boolean' | 'integer' | 'number' | undefined {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return undefined;
}

function appendDescription(schema: JsonSchema, text: string): JsonSchema {
  return { ...schema, description: schema.description ? `${schema.description}; ${text}` : text };
}

const conversion: ConversionConfig = {
  target: 'draft-2020-12',
  errorMode: 'ignore',
  definitions: ALL_COMPONENTS,
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  overrideSchema({ valibotSchema, jsonSchema }: OverrideSchemaContext): JsonSchema | undefined {
    // A constant with its type: generators for other languages need it to type the field.
    if (valibotSchema.type === 'literal') {
      const type = jsonTypeOf((valibotSchema as v.LiteralSchema<v.Literal, undefined>).literal);
      return type ? { ...jsonSchema, type } : undefined;
    }
    // Any object, as a push's `data` is: generated clients must accept every property.
    if (valibotSchema === requests.FreeObject) return { type: 'object', additionalProperties: true };
    // The "is a JSON object, not an array" guard in front of every body.
    if (valibotSchema.type === 'custom') return { ...jsonSchema, type: 'object' };
    // A default makes generated clients require the field; the default itself is said in words.
    if ('default' in jsonSchema) {
      const { default: fallback, ...rest } = jsonSchema;
      return appendDescription(rest, `defaults to ${JSON.stringify(fallback)}`);
    }
    return undefined;
  },
  overrideAction({ valibotAction, jsonSchema }: OverrideActionContext): JsonSchema | undefined {
    // SpecDateTime's transform to an ISO instant: the wire form is the text the spec shows.
    if (valibotAction === requests.SpecDateTime.pipe[1]) {
      return {
        ...jsonSchema,
        pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$',
        description: 'UTC, `YYYY-MM-DD HH:MM:SS`; must name a real instant',
        examples: ['2027-01-01 00:00:00'],
      };
    }
    // A rule JSON Schema cannot express keeps its message, as a description.
    const { message } = valibotAction as { message?: unknown };
    if (valibotAction.type === 'check' && typeof message === 'string') return appendDescription(jsonSchema, message);
    return undefined;
  },
};

function componentSchemas(): Record<string, JsonSchema> {
  const schemas = toJsonSchemaDefs(ALL_COMPONENTS, conversion) as Record<string, JsonSchema>;
  // The handler validates batch entries one by one with VipEntry (one bad entry does not sink the batch).
  const batch = schemas.VipBatchBody as { properties: { vips: JsonSchema } };
  batch.properties.vips = { ...batch.properties.vips, items: ref('VipEntry') };
  for (const reason of API_REASONS) {
    const name = dataComponent(reason);
    const schema = schemas[name]!;
    schemas[name] = { ...schema, description: ERROR_REASONS[reason].description };
  }
  for (const status of API_ERROR_STATUSES) {
    const name = errorComponent(status);
    const body = schemas[name] as { properties: Record<string, Json> };
    const reasons = reasonsOf(status);
    const data = body.properties.data!;
    // Several reasons: one schema each, told apart by `reason`.
    if (reasons.length > 1) {
      body.properties.data = { ...data, discriminator: { propertyName: 'reason', mapping: Object.fromEntries(reasons.map((r) => [r, ref(dataComponent(r)).$ref])) } };
    }
    schemas[name] = { ...body, description: `An error answered with HTTP ${status}; \`data.reason\` is ${reasons.map((r) => `\`${r}\``).join(', ')}` };
  }
  return schemas;
}

/** A named schema by reference, any other converted in place. */
const schemaOf = (schema: Schema): JsonSchema => {
  const name = NAMES.get(schema);
  return name ? ref(name) : toJsonSchema(schema, conversion);
};

/** The dev store's alice (`npm run dev`): request examples work there as they are. */
/**
 * alice's oId in the dev store (src/community/demoUsers.ts, which the compiled service does not
 * ship), so that "Try it out" works against `npm run dev`; test/http/openapi.e2e.spec.ts checks it.
 */
export const EXAMPLE_OID = '1630399136785';
const ALICE = EXAMPLE_OID;
const OPERATION_ID = 'qnaivgfy0durkko';

/** Path and query parameters by name: a value to try. */
const PARAMETER_EXAMPLES: Record<string, string> = { oId: ALICE, operationId: OPERATION_ID };

/** An object schema → OpenAPI parameters (`in` path or query), descriptions from the schema. */
function parameters(schema: Schema, where: 'path' | 'query'): Json[] {
  const json = toJsonSchema(schema, { ...conversion, definitions: undefined }) as JsonSchema;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property as JsonSchema;
    const example = PARAMETER_EXAMPLES[name];
    return { name, in: where, required: where === 'path' || required.has(name), ...(description && { description }), schema: rest, ...(example && { example }) };
  });
}

const example = <S extends Schema>(schema: S, value: v.InferInput<S>): [Schema, unknown] => [schema, value];

/** A request body for each body schema, as "Try it out" sends it. */
const REQUEST_EXAMPLES = new Map<Schema, unknown>([
  example(requests.PointsEditBody, { oId: ALICE, point: 10, memo: 'daily quest' }),
  example(requests.MedalGiveBody, {
    oId: ALICE,
    name: 'Pioneer',
    description: 'Played in the first season',
    attr: 'url=https://example.com/pioneer.png&backcolor=ffffff&fontcolor=ff3030',
  }),
  example(requests.MedalRemoveBody, { oId: ALICE, name: 'Pioneer' }),
  example(requests.ItemsQueryBody, { oId: ALICE }),
  example(requests.ItemsEditBody, { oId: ALICE, item: 'checkin1day', sum: 1 }),
  example(requests.VipSubmitBody, { oId: ALICE, quality: 'vip', expired: '2027-01-01 00:00:00' }),
  example(requests.VipBatchBody, {
    oId: ALICE,
    vips: [
      { quality: 'svip', expired: '2027-06-30 00:00:00' },
      { quality: 'vip', expired: '2027-01-01 00:00:00' },
    ],
  }),
  example(requests.MessagePushBody, { oIds: [ALICE], name: 'reward', data: { gold: 100, reason: 'daily login' } }),
  example(requests.ResolveBody, { applied: true, note: 'seen in the ledger' }),
  example(requests.WebhookCreateBody, { url: 'https://game.example/hooks/bridge', events: ['client.signed_in', 'client.disconnected'], description: 'lobby server' }),
]);

const answerExample = <S extends Schema>(schema: S, value: v.InferOutput<S>): [Schema, unknown] => [schema, value];

/** Answers of other forms that routes declare for an error status. */
const ANSWER_EXAMPLES = new Map<Schema, unknown>([
  answerExample(answers.ClientNotFoundBody, { data: {}, message: 'Client not found or disconnected.', status: 404 }),
  answerExample(answers.NotReadyBody, { status: 'not ready', reason: 'store_unreachable' }),
]);

/** What one status stands for, before the reasons that tell its cases apart. */
function statusSummaries({ maxBodyBytes, idempotencyTtlMs }: ApiSettings): Record<number, string> {
  return {
    400: 'Invalid input: `message` names the first field, `data.issues` lists every problem',
    401: 'Invalid apiKey (missing, unknown, disabled, revoked or expired)',
    403: 'The key lacks the permission',
    404: 'Unknown user on the platform, or no such record',
    409: 'Conflicts with the current state, or with another request of the same Idempotency-Key',
    413: `Body over ${formatBytes(maxBodyBytes)}`,
    422: `The platform refused (its message included), or the Idempotency-Key was used in the last ${hours(idempotencyTtlMs)} with a different body`,
    429: 'Too many requests; retry after `Retry-After` seconds',
    500: 'The service failed unexpectedly',
    502: 'The platform failed. For a write it was sent to: the outcome is unknown, and it is never sent again',
    503: 'This node cannot serve it now, or a setting it needs is missing',
    504: 'The platform did not answer in time. For a write: the outcome is unknown; a retry with the same Idempotency-Key answers this again and never re-sends it',
  };
}

const hours = (ms: number) => `${Math.round((ms / 3_600_000) * 10) / 10} h`;

type ErrorExample<R extends ErrorReason> = { message: string; data: ErrorDataOf<R> };

/** One answer the service gives for each reason. */
const ERROR_EXAMPLES: { [R in ErrorReason]: ErrorExample<R> } = {
  validation_failed: { message: 'oId: is required', data: { reason: 'validation_failed', issues: [{ field: 'oId', message: 'is required' }] } },
  unauthenticated: { message: 'Sign in to the console first: /console/login', data: { reason: 'unauthenticated' } },
  forbidden: { message: 'This account may not use the console', data: { reason: 'forbidden' } },
  foreign_origin: { message: 'Origin https://evil.example may not make this request', data: { reason: 'foreign_origin' } },
  user_not_found: { message: 'No user with oId 99999999 on the community platform', data: { reason: 'user_not_found', oId: '99999999' } },
  not_found: { message: `No operation ${OPERATION_ID}`, data: { reason: 'not_found' } },
  route_not_found: { message: 'No route for GET /adm/nothing', data: { reason: 'route_not_found' } },
  method_not_allowed: { message: 'Method GET is not allowed for /adm/points/edit (allowed: POST)', data: { reason: 'method_not_allowed' } },
  conflict: { message: 'sum: user 1630399136786 has 0 of checkin1day, cannot deduct 1', data: { reason: 'conflict' } },
  concurrent_update: { message: 'The record was changed by concurrent requests for too long; retry the request', data: { reason: 'concurrent_update' } },
  claim_in_progress: {
    message: 'Idempotency-Key: a request with this key is still being processed; retry in a few seconds',
    data: { reason: 'claim_in_progress', retryAfterSeconds: 1 },
  },
  claim_lost: {
    message: 'Idempotency-Key: this request lost its claim on the key to a retry (it stalled past the claim window); nothing was written or sent',
    data: { reason: 'claim_lost' },
  },
  operation_not_applied: {
    message: `Operation ${OPERATION_ID} was not applied (resolved by operator console:1630399136785: not in the ledger); send it again with a new Idempotency-Key`,
    data: { reason: 'operation_not_applied', operationId: OPERATION_ID, contradicted: false },
  },
  payload_too_large: { message: 'body: larger than the 1 MiB the service accepts', data: { reason: 'payload_too_large' } },
  idempotency_key_reused: {
    message: 'Idempotency-Key: already used with a different request; use a new key for a new request',
    data: { reason: 'idempotency_key_reused' },
  },
  platform_rejected: { message: 'The community platform refused the operation: 积分不足', data: { reason: 'platform_rejected', platformMessage: '积分不足' } },
  rate_limited: { message: 'Too many requests: this key is limited to 10 per second', data: { reason: 'rate_limited', retryAfterSeconds: 1 } },
  too_many_connections: {
    message: 'Too many realtime connections from this address (at most 200)',
    data: { reason: 'too_many_connections', retryAfterSeconds: 30 },
  },
  internal_error: { message: 'Internal error: the service could not complete the request', data: { reason: 'internal_error' } },
  platform_failed: { message: 'The community platform failed: HTTP 500 from /api/user/getInfoById', data: { reason: 'platform_failed' } },
  outcome_unknown: {
    message: `Outcome unknown: The community platform did not answer within 5000 ms. Operation ${OPERATION_ID} will not be sent again; check the user on the platform, or ask an operator to resolve it, before sending a new request`,
    data: { reason: 'outcome_unknown', operationId: OPERATION_ID, status: 'unknown' },
  },
  not_configured: {
    message: "COMMUNITY_KEY (or COMMUNITY_KEY_POINT), the community platform's gold-finger key for points edits, is not set on this service: set either and restart the service",
    data: { reason: 'not_configured' },
  },
  store_unavailable: {
    message: 'The event store is unavailable: the request may not have been recorded; retry it (with the same Idempotency-Key) in a moment',
    data: { reason: 'store_unavailable', retryAfterSeconds: 1 },
  },
  not_ready: {
    message: 'The service is starting: it is catching up with the event store; retry in a few seconds',
    data: { reason: 'not_ready', retryAfterSeconds: 1 },
  },
  unavailable: { message: 'This node holds its maximum of 10000 realtime connections; reconnect in a moment', data: { reason: 'unavailable', retryAfterSeconds: 30 } },
  platform_timeout: { message: 'The community platform did not answer within 5000 ms', data: { reason: 'platform_timeout' } },
};

/** Every error body a status can have, one named example per reason. */
function errorExamples(status: number): Json {
  return Object.fromEntries(
    reasonsOf(status).map((reason) => {
      const { message, data } = ERROR_EXAMPLES[reason];
      return [reason, { summary: ERROR_REASONS[reason].description, value: { code: status, message, data } }];
    }),
  );
}

/** The spec's own bodies, for the admin routes' key checks. */
const SPEC_ERRORS: Record<number, { component: ComponentName; example: Json }> = {
  401: { component: 'InvalidApiKeyBody', example: { code: 401, message: 'Invalid apiKey', data: {} } },
  403: { component: 'PermissionDeniedBody', example: { code: 403, message: 'No permission to access this resource', data: {} } },
};

const RETRY_AFTER = {
  'Retry-After': { description: 'seconds to wait before sending it again (also `data.retryAfterSeconds`), with the reasons that have it', schema: { type: 'integer', minimum: 1 } },
};

/** Whether a reason of this status tells when to come back (and so sends `Retry-After`). */
const hasRetryAfter = (status: number) => reasonsOf(status).some((reason) => 'retryAfterSeconds' in ERROR_REASONS[reason].data.entries);

/** An error answer of the API, typed by its status; `summary` says what it stands for on this route. */
function errorObject(status: number, summary: string): Json {
  const reasons = reasonsOf(status);
  const list = reasons.map((reason) => `\n- \`${reason}\`: ${ERROR_REASONS[reason].description}`).join('');
  return {
    description: `${summary}. \`data.reason\`:${list}`,
    ...(hasRetryAfter(status) && { headers: RETRY_AFTER }),
    content: { 'application/json': { schema: ref(errorComponent(status)), examples: errorExamples(status) } },
  };
}

function answerObject(answer: Answer, status?: string): Json {
  // The general error form, declared by a route for one status, is that status's error body.
  if (answer.json === answers.ErrorBody && status !== undefined && API_ERROR_STATUSES.includes(Number(status))) return errorObject(Number(status), answer.description);
  const content: Json = {};
  const example = answer.json && ANSWER_EXAMPLES.get(answer.json);
  if (answer.json) content['application/json'] = { schema: schemaOf(answer.json), ...(example !== undefined && { example }) };
  for (const [mediaType, schema] of Object.entries(answer.media ?? {})) content[mediaType] = { schema };
  return {
    description: answer.description,
    ...(answer.headers && { headers: answer.headers }),
    ...(Object.keys(content).length > 0 && { content }),
  };
}

/** The error answers a route can give besides its own: by its access, its input, its method. */
function impliedErrors(route: Route): number[] {
  const errors = new Set(route.errors ?? []);
  if (route.params || route.query || route.body) errors.add(400);
  if (route.body) errors.add(413);
  if (route.access.kind === 'apiKey') {
    // 503: a node that is starting answers so whatever the route; 500: any failure of its own.
    for (const status of [401, 403, 429, 500, 503]) errors.add(status);
    if (route.method === 'post') for (const status of [409, 422]) errors.add(status);
  }
  return [...errors].filter((status) => !(String(status) in (route.answers ?? {}))).sort((a, b) => a - b);
}

const operationId = (route: Route) => `${route.method}${route.path.replace(/:/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`;

function operationObject(route: Route, settings: ApiSettings): Json {
  const adminWrite = route.access.kind === 'apiKey' && route.method === 'post';
  const ok = answerObject(route.ok);
  if (adminWrite) {
    ok.headers = {
      'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string' } },
    };
  }
  const responses: Json = { 200: ok };
  for (const [status, answer] of Object.entries(route.answers ?? {})) responses[status] = answerObject(answer, status);
  const summaries = statusSummaries(settings);
  for (const status of impliedErrors(route)) {
    const spec = route.access.kind === 'apiKey' ? SPEC_ERRORS[status] : undefined;
    responses[status] = spec
      ? {
          description: summaries[status],
          ...(status === 403 && {
            headers: {
              [MISSING_PERMISSION_HEADER]: { description: 'the permission the key lacks (the one in `x-permission`)', schema: { type: 'string', example: 'points:edit' } },
            },
          }),
          content: { 'application/json': { schema: ref(spec.component), example: spec.example } },
        }
      : errorObject(status, summaries[status] ?? `HTTP ${status}`);
  }
  const params = [
    ...(route.params ? parameters(route.params, 'path') : []),
    ...(route.query ? parameters(route.query, 'query') : []),
    ...(route.parameters ?? []).map(({ name, in: where, description, schema }) => ({ name, in: where, required: false, description, schema })),
    ...(adminWrite ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
  ];
  const requestExample = route.body && REQUEST_EXAMPLES.get(route.body);
  return {
    tags: [route.tag],
    summary: route.summary,
    ...(route.description && { description: route.description }),
    operationId: operationId(route),
    security: route.access.kind === 'apiKey' ? [{ apiKey: [] }] : [],
    ...(route.access.kind === 'apiKey' && { 'x-permission': route.access.permission }),
    ...(params.length > 0 && { parameters: params }),
    ...(route.body && {
      requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body), ...(requestExample !== undefined && { example: requestExample }) } } },
    }),
    responses,
  };
}

/** The whole document; build it once and serve the same object. */
export function buildOpenApiDocument(routes: readonly Route[], settings: ApiSettings): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    if (route.undocumented) continue;
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method]: operationObject(route, settings) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'community-bridge',
      version,
      description:
        "Lets application servers act on the users of a community platform through `/adm/` (every call needs the `apiKey` header and the permission named in `x-permission`), and lets those users sign in and receive realtime pushes. Success bodies carry `code: 0` and `msg`; errors `{code, message, data}`, where `data.reason` says which error it is (one schema per reason: match on it, not on `message`) and the spec's own 401 and 403 keep `data: {}`.",
    },
    servers: [{ url: settings.publicUrl(), description: 'this service' }],
    tags: [
      { name: 'points', description: "A user's points on the platform" },
      { name: 'medals', description: "A user's medals on the platform" },
      { name: 'items', description: "A user's item bag on the platform" },
      { name: 'liveness', description: "A user's activity score on the platform" },
      { name: 'vip', description: 'VIP records, kept by this service' },
      { name: 'realtime', description: 'Realtime connections and pushes' },
      { name: 'sign-in', description: 'Signing a realtime client in through the platform' },
      { name: 'audit', description: 'The history of points edits and VIP grants, and unknown outcomes' },
      { name: 'webhooks', description: "An app's webhook endpoints: signed events about its players, their attempts, sending again" },
      { name: 'presence', description: 'Who is online now, across every node' },
      { name: 'meta', description: 'Health, metrics and this description' },
    ],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'apiKey', description: 'An API key issued with `keys create` (`cbk_…`)' } },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: `Retry safely: the same key from the same app with the same body answers the first answer again without calling the platform (kept ${hours(settings.idempotencyTtlMs)}, across restarts); with another body, 422.`,
          schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
        },
      },
      schemas: componentSchemas(),
    },
  };
}
