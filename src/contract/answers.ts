// What the API answers, as valibot schemas: the OpenAPI document converts them like the request
// schemas, the read side builds its answers as their types, and the e2e suites parse real
// answers with them, so the documented shapes cannot drift from what the service sends.
import * as v from 'valibot';
import { WEBHOOK_EVENT_TYPES } from '../domain/events.js';

const SPEC_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const int = v.pipe(v.number(), v.integer());
const text = (description: string) => v.pipe(v.string(), v.description(description));

export const SpecTimestamp = v.pipe(v.string(), v.regex(SPEC_TIMESTAMP), v.description('UTC, `YYYY-MM-DD HH:MM:SS.mmmZ`'), v.examples(['2027-01-01 00:00:00.000Z']));

/** `{code: 0, msg}`: every success; `msg` is the platform's message for forwarded writes. */
export const SuccessBody = v.object({ code: v.literal(0), msg: v.string() });
const success = <E extends v.ObjectEntries>(entries: E) => v.object({ ...SuccessBody.entries, ...entries });

// Errors. The spec's own bodies keep `data: {}` exactly; every other error carries `data.reason`,
// one of the closed list below, with the fields that reason promises.

const retryAfterSeconds = v.pipe(int, v.minValue(1), v.description('seconds to wait before sending it again (the `Retry-After` header says the same)'));
const operationId = v.pipe(v.string(), v.description('the platform operation: in the audit, `operations list`, and `POST /adm/operations/{operationId}/resolve`'));

/** `data` of one reason: `reason` itself, and what it carries besides. */
const data = <R extends string, E extends v.ObjectEntries>(reason: R, entries: E) => v.object({ reason: v.literal(reason), ...entries });

interface ReasonSpec {
  /** The statuses this reason answers with (outcome_unknown: 502 or 504). */
  statuses: readonly number[];
  description: string;
  /** Its `data`, `reason` named as the key it is listed under. */
  data: v.ObjectSchema<{ reason: v.LiteralSchema<string, undefined> } & v.ObjectEntries, undefined>;
  /** Answered by the operator console's own API only, which the OpenAPI document does not describe. */
  consoleOnly?: true;
}

/** Every `data.reason` the service answers with: the one list, closed. */
export const ERROR_REASONS = {
  validation_failed: {
    statuses: [400],
    description: 'Invalid input (also a body that is not JSON): `message` names the first problem, `issues` lists every one; nothing ran',
    data: data('validation_failed', {
      issues: v.pipe(v.array(v.object({ field: v.pipe(v.string(), v.description('dot path; `body` for the whole body')), message: v.string() })), v.minLength(1)),
    }),
  },
  unauthenticated: { statuses: [401], description: 'No live console session', data: data('unauthenticated', {}), consoleOnly: true },
  forbidden: { statuses: [403], description: 'The console session may not do this (not an operator, or without its token)', data: data('forbidden', {}), consoleOnly: true },
  foreign_origin: {
    statuses: [403],
    description: "A browser page on an origin that is neither the service's nor in CORS_ORIGINS; nothing changed",
    data: data('foreign_origin', {}),
  },
  user_not_found: {
    statuses: [404],
    description: 'The platform has no user with this oId; nothing was recorded',
    data: data('user_not_found', { oId: v.pipe(v.string(), v.description('the oId asked for')) }),
  },
  not_found: { statuses: [404], description: 'No such record (an operation, or one of another app)', data: data('not_found', {}) },
  route_not_found: { statuses: [404], description: 'No route for this method and path (paths match exactly: case and trailing slash included)', data: data('route_not_found', {}) },
  method_not_allowed: { statuses: [405, 501], description: 'The path does not take this method (`Allow` lists the ones it takes)', data: data('method_not_allowed', {}) },
  conflict: {
    statuses: [409],
    description: 'Conflicts with the current state: an item deduction the user cannot afford, or a resolution of an outcome that is not unknown; nothing was sent',
    data: data('conflict', {}),
  },
  concurrent_update: {
    statuses: [409],
    description: 'The record was changed by concurrent requests for too long; nothing was written: send it again',
    data: data('concurrent_update', {}),
  },
  claim_in_progress: {
    statuses: [409],
    description: 'A request with the same Idempotency-Key is still being processed: send it again, with the same key, after `retryAfterSeconds`',
    data: data('claim_in_progress', { retryAfterSeconds }),
  },
  claim_lost: {
    statuses: [409],
    description: 'This request stalled past the claim window and a retry took its Idempotency-Key over; it wrote and sent nothing (the retry answers for the key)',
    data: data('claim_lost', {}),
  },
  operation_not_applied: {
    statuses: [409],
    description: 'The operation bound to this Idempotency-Key was resolved as not applied: send it again with a new key, unless `contradicted`',
    data: data('operation_not_applied', {
      operationId,
      contradicted: v.pipe(v.boolean(), v.description('true: the platform said afterwards that it applied it; check the user on the platform before sending it again')),
    }),
  },
  payload_too_large: {
    statuses: [413],
    description: 'The body, or the events it would record, are larger than the service takes; nothing was recorded',
    data: data('payload_too_large', {}),
  },
  idempotency_key_reused: {
    statuses: [422],
    description: 'The Idempotency-Key was used with a different request; use a new key for a new request',
    data: data('idempotency_key_reused', {}),
  },
  platform_rejected: {
    statuses: [422],
    description: 'The platform answered and refused the operation: it did not happen',
    data: data('platform_rejected', { platformMessage: v.pipe(v.string(), v.description("the platform's own message (e.g. 积分不足)")) }),
  },
  rate_limited: { statuses: [429], description: "Over the key's rate limit (RATE_LIMIT_PER_SECOND); nothing ran", data: data('rate_limited', { retryAfterSeconds }) },
  too_many_connections: {
    statuses: [429],
    description: 'This client address holds as many streams as it may (REALTIME_MAX_CONNECTIONS_PER_IP), or opens them faster than it may (REALTIME_CONNECTS_PER_SECOND)',
    data: data('too_many_connections', { retryAfterSeconds }),
  },
  internal_error: { statuses: [500], description: 'The service failed unexpectedly (the log has the cause)', data: data('internal_error', {}) },
  platform_failed: {
    statuses: [502],
    description: 'The platform failed (unreachable, an HTTP error, an answer that could not be read) and nothing was changed: a read, or a write that was never sent',
    data: data('platform_failed', {}),
  },
  outcome_unknown: {
    statuses: [502, 504],
    description:
      'A write was sent, or may have been, and its result is not known (504: no answer in time; 502: an answer that says nothing). It is never sent again: do not resend it; an operator resolves it',
    data: data('outcome_unknown', {
      operationId,
      status: v.pipe(v.picklist(['pending', 'unknown']), v.description('unknown: sent, no usable answer; pending: the service could not record what happened')),
    }),
  },
  not_configured: {
    statuses: [503],
    description:
      "A setting the operation needs is missing on this service (the platform's key, COMMUNITY_KEY or COMMUNITY_KEY_<TYPE>), or its store cannot fence this write; nothing was recorded",
    data: data('not_configured', {}),
  },
  store_unavailable: {
    statuses: [503],
    description:
      'The event store did not answer (unreachable, timed out, restarting). A write it interrupted may or may not be recorded: retry with the same Idempotency-Key after Retry-After, on this node or another',
    data: data('store_unavailable', { retryAfterSeconds }),
  },
  not_ready: { statuses: [503], description: 'The node is starting: it is catching up with the event store', data: data('not_ready', { retryAfterSeconds }) },
  unavailable: {
    statuses: [503],
    description: 'This node cannot take it now: it holds its maximum of streams, takes no more new ones this second, or it is shutting down (reconnect, possibly to another node)',
    data: data('unavailable', { retryAfterSeconds: v.optional(retryAfterSeconds) }),
  },
  platform_timeout: {
    statuses: [504],
    description: 'The platform did not answer a read in time (COMMUNITY_TIMEOUT_MS); nothing was changed',
    data: data('platform_timeout', {}),
  },
} as const satisfies Record<string, ReasonSpec>;

export type ErrorReason = keyof typeof ERROR_REASONS;
type Reasons = typeof ERROR_REASONS;
export type ErrorStatus = Reasons[ErrorReason]['statuses'][number];
export type ErrorDataOf<R extends ErrorReason> = v.InferOutput<Reasons[R]['data']>;

/** An error as the service answers it: each reason only with a status it allows, and its fields. */
export type ErrorAnswer = { [R in ErrorReason]: { status: Reasons[R]['statuses'][number]; data: ErrorDataOf<R> } }[ErrorReason];

/** Fails to compile while a reason's data names another key than the one it is listed under. */
type NoneMisnamed<Misnamed extends never> = Misnamed;
export type ReasonsNamedAsListed = NoneMisnamed<{ [R in ErrorReason]: ErrorDataOf<R>['reason'] extends R ? never : R }[ErrorReason]>;

export const reasonsOf = (status: number, options: { consoleToo?: boolean } = {}): ErrorReason[] =>
  (Object.keys(ERROR_REASONS) as ErrorReason[]).filter((reason) => {
    const spec: ReasonSpec = ERROR_REASONS[reason];
    return spec.statuses.includes(status) && (options.consoleToo || !spec.consoleOnly);
  });

/** The statuses the API (not the console) answers with a reason, ascending. */
export const API_ERROR_STATUSES: readonly number[] = [
  ...new Set(Object.values(ERROR_REASONS as Record<ErrorReason, ReasonSpec>).flatMap((r) => (r.consoleOnly ? [] : r.statuses))),
].sort((a, b) => a - b);

const errorBodyOf = (status: number) => {
  const options: ReasonSpec['data'][] = reasonsOf(status).map((reason) => ERROR_REASONS[reason].data);
  return v.object({
    code: v.pipe(v.literal(status), v.description('the HTTP status')),
    message: v.pipe(v.string(), v.description('what happened and what to do, for people; match on `data.reason`, not on this')),
    data: options.length === 1 ? options[0]! : v.variant('reason', options),
  });
};

/** The error body of each status, `data` one of the reasons that status allows. */
export const ErrorBodies: Readonly<Record<number, v.GenericSchema>> = Object.fromEntries(API_ERROR_STATUSES.map((status) => [status, errorBodyOf(status)]));

/** The spec's own 401 body, whatever made the key invalid. */
export const InvalidApiKeyBody = v.object({ code: v.literal(401), message: v.literal('Invalid apiKey'), data: v.strictObject({}) });
/** The spec's own 403 body for a key without the endpoint's permission. */
export const PermissionDeniedBody = v.object({ code: v.literal(403), message: v.literal('No permission to access this resource'), data: v.strictObject({}) });

/** Any error body of the API: `{code, message, data}` (`/adm/user/get`'s spec 404 aside). */
export const ErrorBody = v.union([InvalidApiKeyBody, PermissionDeniedBody, ...Object.values(ErrorBodies)]);

export const ItemsBody = success({ data: v.pipe(v.record(v.string(), int), v.description('item name → quantity')) });
export const LivenessBody = success({ liveness: v.number() });
const ids = (description: string) => v.pipe(v.array(v.string()), v.description(description));
export const PushAnswer = success({
  data: v.object({
    online: ids('given ids whose user had at least one open connection (on any node) when the push was accepted'),
    offline: ids('given ids of known users with no open connection'),
    unknown: ids('given ids that name no user this service knows'),
    counts: v.optional(
      v.pipe(
        v.object({ online: v.number(), offline: v.number(), unknown: v.number() }),
        v.description(
          "only in a retry's answer (Idempotent-Replayed) to a push whose lists were longer than 100 ids: the lists then hold their first 100 ids, and these are their full lengths",
        ),
      ),
    ),
  }),
});
export const OperationAnswer = v.object({
  ...SuccessBody.entries,
  data: v.optional(v.object({ transactionId: v.pipe(v.string(), v.description("the platform's transaction id, when its message carries one (points edits)")) })),
});

/** The platform writes its transaction id into a Chinese sentence: `…交易oId为：<id>`. */
const TRANSACTION_ID = /交易oId为[：:]\s*([A-Za-z0-9_-]+)/;

/** The answer to an applied platform operation: its message, and the transaction id it names. */
export function operationAnswer(message: string): v.InferOutput<typeof OperationAnswer> {
  const transactionId = TRANSACTION_ID.exec(message)?.[1];
  return { code: 0, msg: message, ...(transactionId !== undefined && { data: { transactionId } }) };
}

const VipBrief = v.object({ id: v.string(), userId: v.string(), quality: v.picklist(['vip', 'svip']), expired: SpecTimestamp });
export const VipRecord = v.object({ ...VipBrief.entries, created: SpecTimestamp, updated: SpecTimestamp });
export const VipListBody = success({ data: v.pipe(v.array(VipRecord), v.description('svip first, then vip')) });
export const VipSubmitAnswer = success({ data: VipRecord });
export const VipBatchAnswer = success({
  data: v.object({
    success: v.array(VipBrief),
    total: int,
    succeed: int,
    failed: int,
    failures: v.array(v.object({ index: int, quality: v.unknown(), expired: v.unknown(), message: v.string() })),
  }),
});

/** `/adm/user/get`, a known client: signed in (with the user) or not. */
export const UserGetAnswer = v.union([
  success({ data: v.object({ authenticated: v.literal(false), clientId: v.string() }) }),
  success({
    data: v.object({
      authenticated: v.literal(true),
      clientId: v.string(),
      user: v.object({ avatar: v.string(), name: v.string(), nickname: v.string(), oId: v.string() }),
    }),
  }),
]);
/** `/adm/user/get`, an unknown or disconnected client: the spec's own body. */
export const ClientNotFoundBody = v.object({ data: v.object({}), message: v.literal('Client not found or disconnected.'), status: v.literal(404) });

const webhookEventType = v.picklist(WEBHOOK_EVENT_TYPES);
/** An app's webhook endpoint as the API shows it (never its secret). */
export const WebhookEndpoint = v.object({
  id: v.string(),
  appId: v.string(),
  url: v.string(),
  events: v.array(webhookEventType),
  description: v.string(),
  status: v.pipe(v.picklist(['enabled', 'disabled']), v.description('a disabled endpoint is sent nothing; its deliveries wait until it is enabled')),
  disabled: v.optional(
    v.pipe(
      v.object({ reason: v.picklist(['requested', 'failing']), detail: v.string(), at: SpecTimestamp }),
      v.description('`failing`: every delivery failed for the whole retry period; enable it once it answers again'),
    ),
  ),
  created: SpecTimestamp,
  previousSecretValidUntil: v.optional(v.pipe(SpecTimestamp, v.description('after a rotation: the previous secret also signs until then'))),
  lastDelivered: v.optional(SpecTimestamp),
  lastFailed: v.optional(v.object({ at: SpecTimestamp, why: v.string() })),
  pending: v.pipe(int, v.description('deliveries not yet made nor given up')),
});
const secretShownOnce = v.optional(
  v.pipe(v.string(), v.description('the signing secret (`whsec_…`), shown in this answer only; absent when an Idempotency-Key replays the answer (rotate to get a new one)')),
);
export const WebhookCreated = success({ data: v.object({ endpoint: WebhookEndpoint, secret: secretShownOnce }) });
export const WebhookAnswer = success({ data: WebhookEndpoint });
export const WebhookList = success({ data: v.object({ items: v.pipe(v.array(WebhookEndpoint), v.description('oldest first')) }) });
export const WebhookRotated = success({ data: v.object({ endpoint: WebhookEndpoint, secret: secretShownOnce, previousValidUntil: SpecTimestamp }) });
export const WebhookDeletedAnswer = success({ data: v.object({ id: v.string(), deleted: v.literal(true) }) });
export const WebhookAttempt = v.object({
  eventId: v.string(),
  type: webhookEventType,
  deliveryId: v.pipe(v.string(), v.description('the event to this endpoint')),
  attempt: v.pipe(int, v.description('1 for the first attempt of the delivery')),
  node: v.pipe(v.string(), v.description('the node that sent it')),
  started: SpecTimestamp,
  result: v.pipe(
    v.picklist(['delivered', 'failed', 'sending', 'interrupted']),
    v.description('`sending`: no result yet; `interrupted`: its node stopped while sending and a later attempt sent the event again'),
  ),
  status: v.optional(v.pipe(int, v.description("the receiver's HTTP status"))),
  error: v.optional(v.pipe(v.string(), v.description('why it failed without a 2xx (a timeout, a refused address, a redirect not followed)'))),
  response: v.optional(v.pipe(v.string(), v.description("the first 1 KiB of the receiver's answer"))),
  durationMs: v.optional(int),
  retryAt: v.optional(v.pipe(SpecTimestamp, v.description('after a failure: when the next attempt may start (absent: given up)'))),
  ended: v.optional(SpecTimestamp),
});
export const WebhookAttempts = success({ data: v.object({ items: v.pipe(v.array(WebhookAttempt), v.description('newest first')) }) });
export const WebhookResent = success({ data: v.object({ eventId: v.string(), deliveryId: v.string() }) });

export const ResolveAnswer = success({
  data: v.object({ operationId: v.string(), status: v.pipe(v.picklist(['applied', 'failed']), v.description('what the operation now counts as')) }),
});

/** A platform operation without a known outcome, as `GET /adm/operations` lists it. */
export const OperationEntry = v.object({
  operationId: v.string(),
  kind: v.picklist(['PointsEditRequested', 'MedalGiveRequested', 'MedalRemoveRequested', 'ItemsEditRequested']),
  status: v.pipe(v.picklist(['unknown', 'pending']), v.description('unknown: sent, then no trustworthy answer (resolve it); pending: its request may still be running')),
  oId: v.string(),
  userName: v.string(),
  request: v.pipe(v.record(v.string(), v.unknown()), v.description('what was asked of the platform (the request body, less the user)')),
  appId: text('the application that asked'),
  keyId: text('the API key it used'),
  requestedAt: SpecTimestamp,
  node: v.optional(text('the node that sent it')),
  idempotencyKey: v.optional(text('the Idempotency-Key the caller sent')),
  requestId: v.optional(text('the X-Request-Id of the request that sent it')),
  reason: v.optional(text('why its outcome is unknown')),
});
export const OperationListAnswer = success({
  data: v.object({
    operations: v.pipe(v.array(OperationEntry), v.description('oldest first, at most `limit`')),
    more: v.pipe(v.boolean(), v.description('more operations matched than `limit`')),
  }),
});

/** Any JSON object: what a push carries in `data`, delivered as it was given. */
const FreeObject = v.record(v.string(), v.unknown());

/** The user in `PB_CONNECT` and `login` frames (docs/api.md, `GET /api/realtime`). */
export const RealtimeUser = v.object({
  id: v.pipe(v.string(), v.description("this service's user id (`userIds` of a push)")),
  oId: v.pipe(v.string(), v.description("the platform's user id (`oIds` of a push)")),
  name: v.string(),
  nickname: v.string(),
  avatar: v.string(),
  email: v.pipe(v.string(), v.description('always empty: the platform shares no email')),
  emailVisibility: v.boolean(),
  verified: v.pipe(v.boolean(), v.description('true: the platform vouched for the account')),
  collectionId: v.string(),
  collectionName: v.string(),
  created: SpecTimestamp,
  updated: SpecTimestamp,
});
/** Realtime frames (docs/api.md, `GET /api/realtime`): the JSON `data` line of each server-sent event, by event name. */
export const PbConnectFrame = v.object({ client_id: v.string(), login_status: v.boolean(), user: v.optional(v.pipe(RealtimeUser, v.description('when `login_status` is true'))) });
export const LoginFrame = v.object({ action: v.literal('login'), user: RealtimeUser });
export const MessageFrame = v.object({
  app_id: v.pipe(v.string(), v.description('the id of the application that pushed it')),
  name: v.pipe(v.string(), v.description("the push's `name`")),
  data: v.pipe(FreeObject, v.description("the push's `data`, as given")),
});

/** `GET /` for a program: what this is and where its documentation is. */
export const ServiceBody = v.object({ service: v.string(), version: v.string(), links: v.record(v.string(), v.string()) });

export const HealthBody = v.object({ status: v.literal('ok') });
const warnings = v.optional(
  v.pipe(v.array(v.string()), v.description("what leaves some operations unavailable or late (e.g. no COMMUNITY_KEY, followers of the log held back; with an operator's key)")),
);
const clockOffsetMs = v.pipe(v.number(), v.description("this node's clock minus the log's clock, in ms (not ready past CLOCK_MAX_OFFSET_MS; with an operator's key)"));
const position = v.optional(v.pipe(int, v.description("the log position the read models have applied (with an operator's key)")));
/** Why a node is not ready, as anyone may learn it; the detail goes to the log and to operators. */
export const NotReadyReason = v.pipe(
  v.picklist(['starting', 'catching_up', 'store_unreachable', 'store_appends_failing', 'read_model_failed', 'clock_offset']),
  v.description(
    "starting: replaying the log at start; catching_up: the read models lag behind the store; store_unreachable: the store does not answer; store_appends_failing: appends fail; read_model_failed: a read model failed on an event; clock_offset: the clock is off the log's past CLOCK_MAX_OFFSET_MS",
  ),
);
const detail = v.optional(v.pipe(v.string(), v.description("what went wrong, in words (with an operator's key; always in the node's log)")));
export const ReadyBody = v.object({ status: v.literal('ready'), position, clockOffsetMs: v.optional(clockOffsetMs), warnings });
export const NotReadyBody = v.object({ status: v.literal('not ready'), reason: NotReadyReason, detail, position, clockOffsetMs: v.optional(clockOffsetMs), warnings });

const actor = {
  position: v.pipe(int, v.description('global log position: the cursor for `after` / `before`')),
  time: SpecTimestamp,
  appId: text('the application that asked'),
  keyId: text('the API key it used'),
  requestId: v.optional(text("the X-Request-Id of the request that made it (the caller's, or the one the service gave it); absent when the log recorded none")),
};
const page = <S extends v.GenericSchema>(item: S, order = 'oldest first') =>
  success({
    data: v.object({
      items: v.pipe(v.array(item), v.description(order)),
      next: v.optional(v.pipe(int, v.description('later entries exist: ask again with `after=<next>`'))),
      prev: v.optional(v.pipe(int, v.description('earlier entries exist: ask again with `before=<prev>`'))),
    }),
  });

/** What became of a platform operation the audit lists. */
const outcome = v.object({
  status: v.pipe(
    v.picklist(['applied', 'rejected', 'failed', 'unknown', 'pending']),
    v.description('applied / rejected (the platform said no) / failed (surely not done) / unknown (sent, then no answer in time) / pending'),
  ),
  message: v.optional(text("the platform's message (applied, rejected)")),
  reason: v.optional(text('what went wrong (failed, unknown)')),
  at: v.optional(SpecTimestamp),
  resolution: v.optional(
    v.pipe(
      v.object({
        applied: v.boolean(),
        note: v.string(),
        by: v.union([
          v.object({ kind: v.literal('operator'), name: v.string() }),
          v.object({ kind: v.literal('app'), appId: v.string(), keyId: v.string(), allApps: v.optional(v.literal(true)) }),
        ]),
        at: SpecTimestamp,
      }),
      v.description('an unknown outcome someone settled after checking the platform: an operator at the CLI, or an app'),
    ),
  ),
  answeredAfterResolution: v.optional(
    v.pipe(
      v.object({ answer: v.picklist(['applied', 'rejected', 'failed', 'unknown']), detail: v.string(), at: SpecTimestamp }),
      v.description("the platform's answer to the request that sent it, when it came after the resolution: kept beside it for review; the resolution stands"),
    ),
  ),
});
/** An entry of a platform operation's history: who asked, under which operation, and what came of it. */
const operationEntry = { ...actor, operationId: v.string() };

export const PointsAuditEntry = v.object({ ...operationEntry, request: v.object({ point: int, memo: v.string() }), outcome });
export const MedalAuditEntry = v.object({
  ...operationEntry,
  action: v.pipe(v.picklist(['give', 'remove']), v.description('`/adm/medal/give` or `/adm/medal/remove`')),
  request: v.object({
    name: v.string(),
    description: v.optional(text('give only')),
    attr: v.optional(text('give only')),
    data: v.optional(text('give only')),
  }),
  outcome,
});
export const ItemsAuditEntry = v.object({
  ...operationEntry,
  request: v.object({ item: v.string(), sum: v.pipe(int, v.description('added (> 0) or deducted (< 0)')) }),
  outcome,
});
export const VipAuditEntry = v.object({
  ...actor,
  action: v.picklist(['granted', 'renewed']),
  recordId: v.string(),
  quality: v.picklist(['vip', 'svip']),
  expired: SpecTimestamp,
  previousExpired: v.optional(v.pipe(SpecTimestamp, v.description('the expiry a renewal replaced'))),
});
/** A user online now (`GET /adm/presence`). */
export const PresenceEntry = v.object({
  position: v.pipe(int, v.description('log position of the earliest sign-in among its live clients: the order, and the cursor for `after` / `before`')),
  userId: text("this service's user id (`userIds` of a push)"),
  oId: text("the platform's user id"),
  name: v.string(),
  nickname: v.string(),
  avatar: v.string(),
  clients: v.pipe(int, v.minValue(1), v.description('signed-in realtime clients of the user held by live nodes')),
  since: v.pipe(SpecTimestamp, v.description("the earliest of those clients' sign-ins, as the log recorded it")),
});
export const PresencePage = page(PresenceEntry, 'by `position`: the user online longest first');
/** One user's presence (`GET /adm/presence/:oId`). */
export const PresenceAnswer = success({
  data: v.object({
    oId: v.string(),
    online: v.pipe(v.boolean(), v.description('at least one signed-in realtime client held by a live node')),
    clients: v.pipe(int, v.description('how many (0 when offline)')),
    since: v.optional(v.pipe(SpecTimestamp, v.description("when online: the earliest of those clients' sign-ins, as the log recorded it"))),
    userId: v.optional(text("this service's user id, when the service knows the user")),
  }),
});

export const PointsAuditPage = page(PointsAuditEntry);
export const VipAuditPage = page(VipAuditEntry);
export const MedalAuditPage = page(MedalAuditEntry);
export const ItemsAuditPage = page(ItemsAuditEntry);
