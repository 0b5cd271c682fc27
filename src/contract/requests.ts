// What the API takes (docs/api.md): the schemas handlers validate requests with, from which their
// types, the OpenAPI document and the SDK's types all come.
import * as v from 'valibot';
import { parseSpecDateTime } from '../domain/time.js';
import { OID_PATTERN, OID_RULE } from '../domain/user.js';
import { APP_ID, APP_ID_RULE } from '../domain/apiKey.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/events.js';
import { ATTEMPTS_KEPT, EVENT_ID, WEBHOOK_DESCRIPTION_MAX_LENGTH, WEBHOOK_URL_MAX_LENGTH, webhookUrlProblem } from '../domain/webhook.js';

// valibot's object() and record() take an array for an object: a JSON array is refused first.
const isJsonObject = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);
const body = <E extends v.ObjectEntries>(entries: E) =>
  v.pipe(v.custom<Record<string, unknown>>(isJsonObject, 'must be a JSON object'), v.object(entries, 'must be a JSON object'));
/** Any JSON object, kept as given (a push's `data`). */
export const FreeObject = v.custom<Record<string, unknown>>(isJsonObject, 'must be a JSON object');

const text = (max: number) => v.pipe(v.string('must be a string'), v.trim(), v.nonEmpty('must not be empty'), v.maxLength(max, `must be at most ${max} characters`));

/** The platform's user id (fishpi: digits); anything else never reaches the platform or a stream name. */
export const OId = v.pipe(v.string('must be a string'), v.trim(), v.nonEmpty('must not be empty'), v.regex(OID_PATTERN, `must be the platform's user id (${OID_RULE})`));
/** This service's own user id (`user.id` in frames and lookups). */
const UserId = v.pipe(v.string('must be a string'), v.trim(), v.nonEmpty('must not be empty'), v.maxLength(64, 'must be at most 64 characters'));

const int32 = v.pipe(
  v.number('must be a number'),
  v.integer('must be an integer'),
  v.minValue(-2147483648, 'must fit in a 32-bit integer'),
  v.maxValue(2147483647, 'must fit in a 32-bit integer'),
);
const nonZeroInt32 = v.pipe(
  int32,
  v.check((n) => n !== 0, 'must not be 0'),
);

export const PointsEditBody = body({ oId: OId, point: nonZeroInt32, memo: text(255) });

/** The icon must be fetched over http(s): another scheme (javascript:, data:) in a page that shows the medal is an injection. */
const MEDAL_ATTR = /^url=https?:\/\/[^&\s]+&backcolor=[0-9a-fA-F]{3,8}&fontcolor=[0-9a-fA-F]{3,8}$/;
export const MedalGiveBody = body({
  oId: OId,
  name: text(100),
  description: text(500),
  attr: v.pipe(v.string('must be a string'), v.regex(MEDAL_ATTR, 'must be formatted url=<http(s) icon url>&backcolor=<hex_color>&fontcolor=<hex_color>')),
  data: v.optional(v.string('must be a string'), ''),
});
export const MedalRemoveBody = body({ oId: OId, name: text(100) });

export const ItemsQueryBody = body({ oId: OId });
export const ItemsEditBody = body({ oId: OId, item: text(100), sum: nonZeroInt32 });

export const OIdParam = body({ oId: v.pipe(OId, v.description('the community user id')) });

export const VipQuality = v.picklist(['vip', 'svip'], 'must be "vip" or "svip"');
/** `YYYY-MM-DD HH:MM:SS` (UTC) → ISO instant; impossible dates are refused. */
export const SpecDateTime = v.pipe(
  v.string('must be a string'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const iso = parseSpecDateTime(dataset.value);
    if (iso === null) {
      addIssue({ message: 'must be a real date and time written YYYY-MM-DD HH:MM:SS' });
      return NEVER;
    }
    return iso;
  }),
);
const vipEntry = { quality: VipQuality, expired: SpecDateTime };
export const VipEntry = body(vipEntry);
export const VipSubmitBody = body({ oId: OId, ...vipEntry });
export const MAX_BATCH = 100;
/** Entries are validated one by one by the handler, so one bad entry does not sink the batch. */
export const VipBatchBody = body({
  oId: OId,
  vips: v.pipe(v.array(v.unknown(), 'must be an array'), v.nonEmpty('must not be empty'), v.maxLength(MAX_BATCH, `must hold at most ${MAX_BATCH} entries`)),
});

export const MessagePushBody = v.pipe(
  body({
    oIds: v.optional(v.array(OId, 'must be an array of strings'), []),
    userIds: v.optional(v.array(UserId, 'must be an array of strings'), []),
    name: text(100),
    data: FreeObject,
  }),
  v.forward(
    v.check((b) => b.oIds.length + b.userIds.length > 0, 'at least one of oIds and userIds must be given'),
    ['oIds'],
  ),
);

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;

/** Paging of the audit endpoints: `limit` entries after or before a cursor (a global log position). */
const cursor = v.pipe(v.string('must be a string'), v.regex(/^\d{1,15}$/, 'must be a log position (a whole number)'), v.transform(Number));
/** `limit`: a whole number from 1 to `max` in a query, `fallback` when absent. */
const limitQuery = (max: number, fallback: number, description: string) =>
  v.optional(
    v.pipe(
      v.string('must be a string'),
      v.regex(/^\d{1,6}$/, `must be a whole number from 1 to ${max}`),
      v.transform(Number),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(max, `must be at most ${max}`),
      v.description(description),
    ),
    String(fallback),
  );
export const AuditQuery = v.object({
  limit: limitQuery(MAX_PAGE, DEFAULT_PAGE, `entries per page (default ${DEFAULT_PAGE}, at most ${MAX_PAGE})`),
  after: v.optional(v.pipe(cursor, v.description('only entries after this cursor (a `position`, or the `next` of a page)'))),
  before: v.optional(v.pipe(cursor, v.description('only entries before this cursor (a `position`, or the `prev` of a page); without `after`, the newest of them'))),
});

/** The operations without a known outcome: which ones, and how many at most. */
export const OperationListQuery = v.object({
  status: v.optional(v.pipe(v.picklist(['unknown', 'pending'], 'must be unknown or pending'), v.description('only these (default: both)'))),
  search: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(255, 'must be at most 255 characters'),
      v.description('only operations whose Idempotency-Key, X-Request-Id or operation id holds this text (what a caller quotes)'),
    ),
  ),
  limit: AuditQuery.entries.limit,
});

/** Resolving an unknown outcome: what the platform was found to hold, and why we believe it. */
export const OperationIdParam = body({
  operationId: v.pipe(
    v.string('must be a string'),
    v.regex(/^[a-z0-9]{15}$/, 'must be an operation id (15 characters of a-z and 0-9)'),
    v.description('from the 502/504 answer, the audit or `cli operations list --unknown`'),
  ),
});
export const ResolveBody = body({
  applied: v.boolean('must be true or false'),
  note: v.optional(v.pipe(v.string('must be a string'), v.trim(), v.maxLength(500, 'must be at most 500 characters')), ''),
});

/** Webhooks (docs/api.md, "Webhooks"). */
export const WebhookId = v.pipe(
  v.string('must be a string'),
  v.regex(/^[a-z0-9]{15}$/, 'must be a webhook endpoint id (15 characters of a-z and 0-9)'),
  v.description('from `POST /adm/webhooks` or `GET /adm/webhooks`'),
);
export const WebhookIdParam = body({ id: WebhookId });
export const WebhookEventParams = body({
  id: WebhookId,
  eventId: v.pipe(
    v.string('must be a string'),
    v.regex(EVENT_ID, 'must be an event id (evt_ and digits)'),
    v.description('the `id` of the event, as in its body and `Bridge-Event-Id`'),
  ),
});
const AppIdOfEndpoint = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.regex(APP_ID, `must be an app id (${APP_ID_RULE})`),
  v.description("the app the endpoint belongs to: for a key created for every app (`--all-apps`); default: the key's own app"),
);
export const WebhookCreateBody = body({
  url: v.pipe(
    v.string('must be a string'),
    v.trim(),
    v.nonEmpty('must not be empty'),
    v.maxLength(WEBHOOK_URL_MAX_LENGTH, `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`),
    v.rawCheck(({ dataset, addIssue }) => {
      const problem = dataset.typed ? webhookUrlProblem(dataset.value) : undefined;
      if (problem) addIssue({ message: problem });
    }),
    v.description('where events are POSTed: https (http only to a loopback address, for development)'),
  ),
  events: v.pipe(
    v.array(v.picklist(WEBHOOK_EVENT_TYPES, `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`), 'must be an array of event types'),
    v.nonEmpty('must name at least one event type'),
    v.maxLength(WEBHOOK_EVENT_TYPES.length, `must hold at most ${WEBHOOK_EVENT_TYPES.length} event types`),
    v.description('the event types the endpoint receives'),
  ),
  description: v.optional(
    v.pipe(v.string('must be a string'), v.trim(), v.maxLength(WEBHOOK_DESCRIPTION_MAX_LENGTH, `must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters`)),
    '',
  ),
  appId: v.optional(AppIdOfEndpoint),
});
export const WebhookListQuery = v.object({
  appId: v.optional(v.pipe(AppIdOfEndpoint, v.description("only this app's endpoints (a key created for every app sees them all by default)"))),
});
export const DEFAULT_ATTEMPTS = 50;
export const WebhookAttemptsQuery = v.object({
  limit: limitQuery(ATTEMPTS_KEPT, DEFAULT_ATTEMPTS, `attempts, newest first (default ${DEFAULT_ATTEMPTS}, at most ${ATTEMPTS_KEPT}; older ones are in the log)`),
});
