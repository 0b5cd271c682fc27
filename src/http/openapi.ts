// The OpenAPI 3.1 document of every declared route (src/http/api). Request and answer schemas
// are the very valibot schemas the handlers validate with and answer in (src/contract);
// @valibot/to-json-schema turns them into JSON Schema 2020-12, the dialect of OpenAPI 3.1.
// What JSON Schema cannot say (a trim, the date transform, a custom check) is ignored by the
// converter and stated in a description instead. The document is written for generators too:
// free-form objects allow any property, and a request field with a default stays optional.
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema, type OverrideActionContext, type OverrideSchemaContext } from '@valibot/to-json-schema';
import * as answers from '../contract/answers.js';
import * as requests from '../contract/requests.js';
import { version } from '../version.js';
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
  SuccessBody: answers.SuccessBody,
  OperationAnswer: answers.OperationAnswer,
  PushAnswer: answers.PushAnswer,
  ErrorBody: answers.ErrorBody,
  ItemsBody: answers.ItemsBody,
  LivenessBody: answers.LivenessBody,
  VipRecord: answers.VipRecord,
  VipListBody: answers.VipListBody,
  VipSubmitAnswer: answers.VipSubmitAnswer,
  VipBatchAnswer: answers.VipBatchAnswer,
  UserGetAnswer: answers.UserGetAnswer,
  ClientNotFoundBody: answers.ClientNotFoundBody,
  ResolveAnswer: answers.ResolveAnswer,
  ServiceBody: answers.ServiceBody,
  HealthBody: answers.HealthBody,
  ReadyBody: answers.ReadyBody,
  NotReadyBody: answers.NotReadyBody,
  PointsAuditEntry: answers.PointsAuditEntry,
  PointsAuditPage: answers.PointsAuditPage,
  VipAuditEntry: answers.VipAuditEntry,
  VipAuditPage: answers.VipAuditPage,
  RealtimeUser: answers.RealtimeUser,
  PbConnectFrame: answers.PbConnectFrame,
  LoginFrame: answers.LoginFrame,
  MessageFrame: answers.MessageFrame,
} satisfies Record<string, Schema>;
type ComponentName = keyof typeof COMPONENTS;

const NAMES = new Map<Schema, ComponentName>(Object.entries(COMPONENTS).map(([name, schema]) => [schema, name as ComponentName]));
const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

function appendDescription(schema: JsonSchema, text: string): JsonSchema {
  return { ...schema, description: schema.description ? `${schema.description}; ${text}` : text };
}

const conversion: ConversionConfig = {
  target: 'draft-2020-12',
  errorMode: 'ignore',
  definitions: COMPONENTS,
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  overrideSchema({ valibotSchema, jsonSchema }: OverrideSchemaContext): JsonSchema | undefined {
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
      return { ...jsonSchema, pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$', description: 'UTC, `YYYY-MM-DD HH:MM:SS`; must name a real instant', examples: ['2027-01-01 00:00:00'] };
    }
    // A rule JSON Schema cannot express keeps its message, as a description.
    const { message } = valibotAction as { message?: unknown };
    if (valibotAction.type === 'check' && typeof message === 'string') return appendDescription(jsonSchema, message);
    return undefined;
  },
};

function componentSchemas(): Record<string, JsonSchema> {
  const schemas = toJsonSchemaDefs(COMPONENTS, conversion) as Record<string, JsonSchema>;
  // The handler validates batch entries one by one with VipEntry (one bad entry does not sink the batch).
  const batch = schemas.VipBatchBody as { properties: { vips: JsonSchema } };
  batch.properties.vips = { ...batch.properties.vips, items: ref('VipEntry') };
  return schemas;
}

/** A named schema by reference, any other converted in place. */
const schemaOf = (schema: Schema): JsonSchema => {
  const name = NAMES.get(schema);
  return name ? ref(name) : toJsonSchema(schema, conversion);
};

/** An object schema → OpenAPI parameters (`in` path or query), descriptions from the schema. */
function parameters(schema: Schema, where: 'path' | 'query'): Json[] {
  const json = toJsonSchema(schema, { ...conversion, definitions: undefined }) as JsonSchema;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property as JsonSchema;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description && { description }), schema: rest };
  });
}

function errorDescriptions({ maxBodyBytes, idempotencyTtlMs }: ApiSettings): Record<number, string> {
  return {
    400: 'Invalid input: `message` names the first field, `data.issues` lists every problem',
    401: 'Invalid apiKey (missing, unknown, disabled, revoked or expired)',
    403: 'The key lacks the permission',
    404: 'Unknown user on the platform, or no such record',
    409: `Conflicts with the current state: a deduction the user cannot afford, a request with the same Idempotency-Key still running (retry after \`Retry-After\`), or an operation an operator resolved as not applied`,
    413: `Body over ${formatBytes(maxBodyBytes)}`,
    422: `The platform refused (its message included), or the Idempotency-Key was used in the last ${hours(idempotencyTtlMs)} with a different body`,
    429: 'Over the per-key rate limit (when RATE_LIMIT_PER_SECOND is set); retry after `Retry-After` seconds',
    502: 'The platform failed. For a write it was sent to: the outcome is unknown, `data.operationId` names it, and it is never sent again',
    503: 'A setting this operation needs is missing on the service (the platform key: COMMUNITY_KEY or COMMUNITY_KEY_<TYPE>); nothing was recorded',
    504: 'The platform did not answer in time. For a write: the outcome is unknown (`data: {operationId, status}`); a retry with the same Idempotency-Key answers this again and never re-sends it',
  };
}

const hours = (ms: number) => `${Math.round((ms / 3_600_000) * 10) / 10} h`;

const ERROR_EXAMPLES: Record<number, Json> = {
  400: { code: 400, message: 'oId: is required', data: { issues: [{ field: 'oId', message: 'is required' }] } },
  401: { code: 401, message: 'Invalid apiKey', data: {} },
  403: { code: 403, message: 'No permission to access this resource', data: {} },
};

function answerObject(answer: Answer): Json {
  const content: Json = {};
  if (answer.json) content['application/json'] = { schema: schemaOf(answer.json) };
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
    [401, 403, 429].forEach((s) => errors.add(s));
    if (route.access.platformKey) errors.add(503);
    if (route.method === 'post') [409, 422].forEach((s) => errors.add(s));
  }
  return [...errors].filter((status) => !(String(status) in (route.answers ?? {}))).sort();
}

const operationId = (route: Route) =>
  `${route.method}${route.path.replace(/:/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`;

function operationObject(route: Route, settings: ApiSettings): Json {
  const adminWrite = route.access.kind === 'apiKey' && route.method === 'post';
  const ok = answerObject(route.ok);
  if (adminWrite) {
    ok.headers = { 'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string' } } };
  }
  const responses: Json = { 200: ok };
  for (const [status, answer] of Object.entries(route.answers ?? {})) responses[status] = answerObject(answer);
  const descriptions = errorDescriptions(settings);
  for (const status of impliedErrors(route)) {
    const example = ERROR_EXAMPLES[status];
    responses[status] = {
      description: descriptions[status] ?? 'See `message`',
      ...(status === 429 && { headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } } }),
      content: { 'application/json': { schema: ref('ErrorBody'), ...(example && { example }) } },
    };
  }
  const params = [
    ...(route.params ? parameters(route.params, 'path') : []),
    ...(route.query ? parameters(route.query, 'query') : []),
    ...(route.parameters ?? []).map(({ name, in: where, description, schema }) => ({ name, in: where, required: false, description, schema })),
    ...(adminWrite ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
  ];
  return {
    tags: [route.tag],
    summary: route.summary,
    ...(route.description && { description: route.description }),
    operationId: operationId(route),
    security: route.access.kind === 'apiKey' ? [{ apiKey: [] }] : [],
    ...(route.access.kind === 'apiKey' && { 'x-permission': route.access.permission }),
    ...(params.length > 0 && { parameters: params }),
    ...(route.body && { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body) } } } }),
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
        'Lets application servers act on the users of a community platform through `/adm/` (every call needs the `apiKey` header and the permission named in `x-permission`), and lets those users sign in and receive realtime pushes. Success bodies carry `code: 0` and `msg`; errors `{code, message, data}`.',
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
