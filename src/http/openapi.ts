// The OpenAPI 3.1 description of the service (issue 4). Request schemas are the very valibot
// schemas the handlers parse with (src/http/schemas.ts), response schemas those of
// src/http/responses.ts; @valibot/to-json-schema turns both into JSON Schema 2020-12, the dialect
// of OpenAPI 3.1. What JSON Schema cannot say (a trim, the date transform, a custom check) is
// ignored by the converter and stated in a description instead.
import { toJsonSchemaDefs, type JsonSchema, type OverrideActionContext, type OverrideSchemaContext } from '@valibot/to-json-schema';
import { version } from '../version.js';
import type * as v from 'valibot';
import type { Permission } from '../domain/permissions.js';
import * as res from './responses.js';
import { UserGetQuery } from './routes/userGet.js';
import * as req from './schemas.js';

type Schema = v.GenericSchema;
type Json = Record<string, unknown>;

/** Every schema the document names, by component name (refs are `#/components/schemas/<name>`). */
const COMPONENTS = {
  OId: req.OId,
  VipQuality: req.VipQuality,
  SpecDateTime: req.SpecDateTime,
  SpecTimestamp: res.SpecTimestamp,
  PointsEditBody: req.PointsEditBody,
  MedalGiveBody: req.MedalGiveBody,
  MedalRemoveBody: req.MedalRemoveBody,
  ItemsQueryBody: req.ItemsQueryBody,
  ItemsEditBody: req.ItemsEditBody,
  VipEntry: req.VipEntry,
  VipSubmitBody: req.VipSubmitBody,
  VipBatchBody: req.VipBatchBody,
  MessagePushBody: req.MessagePushBody,
  ResolveBody: req.ResolveBody,
  SuccessBody: res.SuccessBody,
  OperationAnswer: res.OperationAnswer,
  PushAnswer: res.PushAnswer,
  ErrorBody: res.ErrorBody,
  ItemsBody: res.ItemsBody,
  LivenessBody: res.LivenessBody,
  VipRecord: res.VipRecord,
  VipListBody: res.VipListBody,
  VipSubmitAnswer: res.VipSubmitAnswer,
  VipBatchAnswer: res.VipBatchAnswer,
  UserGetAnswer: res.UserGetAnswer,
  ClientNotFoundBody: res.ClientNotFoundBody,
  HealthBody: res.HealthBody,
  ReadyBody: res.ReadyBody,
  NotReadyBody: res.NotReadyBody,
  PointsAuditEntry: res.PointsAuditEntry,
  PointsAuditPage: res.PointsAuditPage,
  VipAuditEntry: res.VipAuditEntry,
  VipAuditPage: res.VipAuditPage,
} satisfies Record<string, Schema>;
type ComponentName = keyof typeof COMPONENTS;

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

function appendDescription(schema: JsonSchema, text: string): JsonSchema {
  return { ...schema, description: schema.description ? `${schema.description}; ${text}` : text };
}

const conversion = {
  target: 'draft-2020-12' as const,
  errorMode: 'ignore' as const,
  overrideRef: ({ referenceId }: { referenceId: string }) => `#/components/schemas/${referenceId}`,
  overrideSchema({ valibotSchema, jsonSchema }: OverrideSchemaContext): JsonSchema | undefined {
    // The "is a JSON object, not an array" guard in front of every body.
    if (valibotSchema.type === 'custom') return { ...jsonSchema, type: 'object' };
    return undefined;
  },
  overrideAction({ valibotAction, jsonSchema }: OverrideActionContext): JsonSchema | undefined {
    // SpecDateTime's transform to an ISO instant: the wire form is the text the spec shows.
    if (valibotAction === req.SpecDateTime.pipe[1]) {
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

/** Object schema → OpenAPI parameters (`in` path or query). */
function parameters(schema: Schema, where: 'path' | 'query', descriptions: Record<string, string> = {}): Json[] {
  const json = toJsonSchemaDefs({ params: schema }, { ...conversion, overrideRef: undefined }).params as JsonSchema;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(descriptions[name] && { description: descriptions[name] }),
    schema: property,
  }));
}

const ERRORS: Record<number, string> = {
  400: 'Invalid input: `message` names the first field, `data.issues` lists every problem',
  401: 'Invalid apiKey (missing, unknown, disabled, revoked or expired)',
  403: 'The key lacks the permission',
  404: 'Unknown user on the platform',
  409: 'Conflicts with the current state: a deduction the user cannot afford, a request with the same Idempotency-Key still running, or an operation an operator resolved as not applied',
  413: 'Body over 1 MiB',
  422: 'The platform refused (its message included), or the Idempotency-Key was used before with a different body',
  429: 'Over the per-key rate limit (when RATE_LIMIT_PER_SECOND is set); retry after `Retry-After` seconds',
  502: 'The platform failed. For a write it was sent to: the outcome is unknown, `data.operationId` names it, and it is never sent again',
  503: "The platform's gold-finger key for this operation is not set on the service (COMMUNITY_KEY or COMMUNITY_KEY_<TYPE>): a configuration error; nothing was looked up or recorded",
  504: 'The platform did not answer in time. For a write: the outcome is unknown (`data: {operationId, status}`); a retry with the same Idempotency-Key answers this again and never re-sends it',
};

const json = (schema: Json, description: string, example?: unknown) => ({
  description,
  content: { 'application/json': { schema, ...(example !== undefined && { example }) } },
});
const errorResponse = (status: number) => ({
  ...json(ref('ErrorBody'), ERRORS[status]!, {
    code: status,
    message: status === 401 ? 'Invalid apiKey' : status === 403 ? 'No permission to access this resource' : status === 400 ? 'oId: is required' : '…',
    data: status === 400 ? { issues: [{ field: 'oId', message: 'is required' }] } : {},
  }),
  ...(status === 429 && { headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } } }),
});
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });

interface Operation {
  method: 'get' | 'post';
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Admin endpoints: the apiKey header and this permission. */
  permission?: Permission;
  body?: ComponentName;
  parameters?: Json[];
  ok: Json;
  errors?: number[];
  /** Other answers, by status. */
  responses?: Record<string, Json>;
}

/** The platform-forwarded writes can fail in every way the platform can. */
const PLATFORM_ERRORS = [400, 404, 413, 422, 502, 503, 504];
const OID_PATH = () => parameters(req.OIdParam, 'path', { oId: 'the community user id' });

function operations(communityName: string): Operation[] {
  const paging = parameters(req.AuditQuery, 'query', {
    limit: 'entries per page (default 50, at most 500)',
    after: 'only entries after this cursor (a `position`, or the `next` of a page)',
    before: 'only entries before this cursor (a `position`, or the `prev` of a page); without `after`, the newest of them',
  });
  return [
    { method: 'post', path: '/adm/points/edit', tag: 'points', summary: 'Add or deduct points', permission: 'points:edit', body: 'PointsEditBody', description: 'A deduction may take the balance below zero: the platform allows it (unless its newer builds check with `COMMUNITY_POINTS_SOURCE=true`).', ok: json(ref('OperationAnswer'), "Applied; `msg` is the platform's message, `data.transactionId` the transaction id it names"), errors: PLATFORM_ERRORS },
    { method: 'post', path: '/adm/medal/give', tag: 'medals', summary: 'Give a medal', permission: 'medal:give', body: 'MedalGiveBody', ok: json(ref('SuccessBody'), 'Applied'), errors: PLATFORM_ERRORS },
    { method: 'post', path: '/adm/medal/remove', tag: 'medals', summary: 'Remove a medal', permission: 'medal:remove', body: 'MedalRemoveBody', ok: json(ref('SuccessBody'), 'Applied'), errors: PLATFORM_ERRORS },
    { method: 'post', path: '/adm/items/query', tag: 'items', summary: "Read a user's item bag", permission: 'items:query', body: 'ItemsQueryBody', ok: json(ref('ItemsBody'), 'The bag'), errors: PLATFORM_ERRORS },
    { method: 'post', path: '/adm/items/edit', tag: 'items', summary: 'Add or deduct items', permission: 'items:edit', body: 'ItemsEditBody', ok: json(ref('SuccessBody'), 'Applied'), errors: [...PLATFORM_ERRORS, 409] },
    { method: 'get', path: '/adm/liveness/{oId}', tag: 'liveness', summary: "Read a user's liveness (activity score)", permission: 'liveness:read', parameters: OID_PATH(), ok: json(ref('LivenessBody'), 'The liveness'), errors: [400, 404, 502, 503, 504] },
    { method: 'get', path: '/adm/vip/{oId}', tag: 'vip', summary: "A user's VIP records", permission: 'vip:read', parameters: OID_PATH(), ok: json(ref('VipListBody'), 'The records, svip first'), errors: [400, 404, 502, 504] },
    { method: 'post', path: '/adm/vip/submit', tag: 'vip', summary: 'Grant or renew one VIP quality', description: 'Resubmitting a quality the user has keeps the record and its id and replaces `expired`.', permission: 'vip:write', body: 'VipSubmitBody', ok: json(ref('VipSubmitAnswer'), 'The record'), errors: [400, 404, 413, 502, 504] },
    { method: 'post', path: '/adm/vip/batch-submit', tag: 'vip', summary: 'Grant or renew several VIP qualities at once', description: 'Valid entries are applied in request order in one atomic append; `failures` lists the others.', permission: 'vip:write', body: 'VipBatchBody', ok: json(ref('VipBatchAnswer'), 'The applied entries and the failures'), errors: [400, 404, 413, 502, 504] },
    { method: 'post', path: '/adm/message/push', tag: 'realtime', summary: 'Push a realtime message to online users', description: 'Each open connection of every targeted user receives an SSE `message` event `{app_id, name, data}`.', permission: 'message:push', body: 'MessagePushBody', ok: json(ref('PushAnswer'), 'Accepted; `data` says which of the given ids were online, offline or unknown at that moment'), errors: [400, 413] },
    {
      method: 'get',
      path: '/adm/user/get',
      tag: 'realtime',
      summary: 'The user behind a realtime client id',
      permission: 'user:get',
      parameters: parameters(UserGetQuery, 'query', { client_id: 'from the `PB_CONNECT` event' }),
      ok: json(ref('UserGetAnswer'), 'The client, signed in (with the user) or not'),
      responses: { 404: json(ref('ClientNotFoundBody'), 'Unknown or disconnected client: the spec\'s own body') },
      errors: [400],
    },
    {
      method: 'post',
      path: '/adm/operations/{operationId}/resolve',
      tag: 'audit',
      summary: 'Resolve an operation whose outcome is unknown',
      description: 'Records what someone who checked the platform found. The Idempotency-Key of the request that sent it then answers accordingly (200 when applied, 409 when not), and the audit shows the resolution.',
      permission: 'operations:resolve',
      parameters: parameters(req.OperationIdParam, 'path', { operationId: 'from the 502/504 answer, the audit or `cli operations list --unknown`' }),
      body: 'ResolveBody',
      ok: json({ type: 'object', required: ['code', 'msg', 'data'], properties: { code: { const: 0 }, msg: { type: 'string' }, data: { type: 'object', properties: { operationId: { type: 'string' }, status: { enum: ['applied', 'failed'] } } } } }, 'Resolved'),
      errors: [400, 404, 409],
    },
    { method: 'get', path: '/adm/audit/points/{oId}', tag: 'audit', summary: "A user's points edits with their outcomes", description: 'Oldest first, from the local history (no platform call): an oId the service never acted on has no entries.', permission: 'audit:read', parameters: [...OID_PATH(), ...paging], ok: json(ref('PointsAuditPage'), 'One page of history'), errors: [400] },
    { method: 'get', path: '/adm/audit/vip/{oId}', tag: 'audit', summary: "A user's VIP grants and renewals", description: 'Oldest first, from the local history (no platform call).', permission: 'audit:read', parameters: [...OID_PATH(), ...paging], ok: json(ref('VipAuditPage'), 'One page of history'), errors: [400] },
    {
      method: 'get',
      path: '/api/realtime',
      tag: 'realtime',
      summary: 'Open the realtime connection (server-sent events)',
      description:
        'No apiKey; a session cookie starts the client signed in. The answer sets the `cb_client` cookie that binds the client to this browser for the login page. Frames have `id`, `event` and `data` (JSON) lines. `PB_CONNECT` first: `{client_id, login_status}` (+ `user` when signed in); then `login` `{action: "login", user}` after sign-in, and `message` `{app_id, name, data}` after a push, its `id` being the push\'s log position. Comment frames keep the connection alive.',
      parameters: [
        { name: 'Last-Event-ID', in: 'header', required: false, description: 'resume after this frame id: a signed-in client gets the messages it missed (within REALTIME_REPLAY_MS)', schema: { type: 'string' } },
        { name: 'lastEventId', in: 'query', required: false, description: 'the same, for clients that cannot set the header', schema: { type: 'string' } },
      ],
      ok: { description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      responses: {
        429: json(ref('ErrorBody'), 'This address holds REALTIME_MAX_CONNECTIONS_PER_IP streams already; retry after `Retry-After` seconds'),
        503: json(ref('ErrorBody'), 'The service is shutting down, or the node holds REALTIME_MAX_CONNECTIONS streams; reconnect in a moment'),
      },
    },
    {
      method: 'post',
      path: '/api/logout',
      tag: 'sign-in',
      summary: 'End the browser session',
      description: 'No apiKey: the session cookie says whose session; the answer clears it. A browser page must be on the service\'s own origin or one listed in CORS_ORIGINS.',
      ok: json(ref('SuccessBody'), 'Signed out (also when there was no session)'),
      responses: { 403: json(ref('ErrorBody'), 'Sent from a page on an origin that is neither the service\'s nor in CORS_ORIGINS') },
    },
    {
      method: 'get',
      path: `/${communityName}/login`,
      tag: 'sign-in',
      summary: 'The login page for a realtime client',
      description:
        "Sends the browser that holds the connection (its `cb_client` cookie) to the community platform's OpenID sign-in, which returns to the callback; any other browser first sees a confirmation naming the site that opened the connection. Sets the `cb_login` cookie the callback requires.",
      parameters: [{ name: 'client_id', in: 'query', required: true, description: 'from the `PB_CONNECT` event', schema: { type: 'string' } }],
      ok: html('The confirmation, for a browser that does not hold the connection'),
      responses: { 302: { description: "To the platform's sign-in page" }, '4XX': html('A page that says what went wrong (unknown or closed client, …)') },
    },
    {
      method: 'get',
      path: `/${communityName}/callback`,
      tag: 'sign-in',
      summary: "Where the platform's sign-in returns",
      description: 'In the browser that opened the login page only: checks the assertion, has the platform verify it, signs the client in (its connection receives `login`) and sets the session cookie.',
      ok: html('"Login succeeded", with a button that closes the window'),
      responses: { '4XX': html('A page that says what went wrong (cancelled, expired, invalid assertion, …)') },
    },
    {
      method: 'get',
      path: '/',
      tag: 'meta',
      summary: 'What this service is, and where its documentation is',
      ok: {
        description: 'A short page; JSON `{service, version, links}` for `Accept: application/json`',
        content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: { type: 'object', properties: { service: { type: 'string' }, version: { type: 'string' }, links: { type: 'object', additionalProperties: { type: 'string' } } } } } },
      },
    },
    { method: 'get', path: '/healthz', tag: 'meta', summary: 'Liveness: the process runs', ok: json(ref('HealthBody'), 'Alive') },
    {
      method: 'get',
      path: '/readyz',
      tag: 'meta',
      summary: 'Readiness: the store answers and the read models have caught up with it',
      ok: json(ref('ReadyBody'), 'Ready'),
      responses: { 503: json(ref('NotReadyBody'), 'Not ready (store unreachable or read models behind)') },
    },
    { method: 'get', path: '/metrics', tag: 'meta', summary: 'Prometheus metrics', ok: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
    { method: 'get', path: '/openapi.json', tag: 'meta', summary: 'This document', ok: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
    { method: 'get', path: '/docs', tag: 'meta', summary: 'This document as a readable page', ok: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } },
  ];
}

function operationObject(op: Operation): Json {
  const admin = op.permission !== undefined;
  const adminWrite = admin && op.method === 'post';
  const ok = adminWrite
    ? { ...op.ok, headers: { 'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string' } } } }
    : op.ok;
  const responses: Json = { 200: ok, ...op.responses };
  const errors = new Set(op.errors ?? []);
  if (admin) [401, 403, 429].forEach((s) => errors.add(s));
  if (adminWrite) [409, 422].forEach((s) => errors.add(s));
  for (const status of [...errors].sort()) responses[status] = errorResponse(status);
  const parameters = [...(op.parameters ?? []), ...(adminWrite ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : [])];
  return {
    tags: [op.tag],
    summary: op.summary,
    ...(op.description && { description: op.description }),
    operationId: `${op.method}${op.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    ...(admin && { security: [{ apiKey: [] }], 'x-permission': op.permission }),
    ...(parameters.length > 0 && { parameters }),
    ...(op.body && { requestBody: { required: true, content: { 'application/json': { schema: ref(op.body) } } } }),
    responses,
  };
}


export interface OpenApiOptions {
  /** The login page's path segment (COMMUNITY_NAME). */
  communityName?: string;
}

/** The whole document; build it once and serve the same object. */
export function buildOpenApiDocument(options: OpenApiOptions = {}): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations(options.communityName ?? 'fishpi')) {
    paths[op.path] = { ...paths[op.path], [op.method]: operationObject(op) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'community-bridge',
      version,
      description:
        'Lets application servers act on the users of a community platform through `/adm/` (every call needs the `apiKey` header and the permission named in `x-permission`), and lets those users sign in and receive realtime pushes. Success bodies carry `code: 0` and `msg`; errors `{code, message, data}`.',
    },
    tags: ['points', 'medals', 'items', 'liveness', 'vip', 'realtime', 'sign-in', 'audit', 'meta'].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'apiKey', description: 'An API key issued with `keys create` (`cbk_…`)' } },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Retry safely: the same key from the same app with the same body answers the first answer again without calling the platform (kept 24 h, across restarts); with another body, 422.',
          schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
        },
      },
      schemas: componentSchemas(),
    },
  };
}
