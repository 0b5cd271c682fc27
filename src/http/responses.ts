// Response bodies of the HTTP API as valibot schemas: the OpenAPI document (src/http/openapi.ts)
// converts them like the request schemas, and the e2e suites parse real answers with them, so
// the documented shapes cannot drift from what the service sends.
import * as v from 'valibot';

const SPEC_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const int = v.pipe(v.number(), v.integer());
const text = (description: string) => v.pipe(v.string(), v.description(description));

export const SpecTimestamp = v.pipe(v.string(), v.regex(SPEC_TIMESTAMP), v.description('UTC, `YYYY-MM-DD HH:MM:SS.mmmZ`'), v.examples(['2027-01-01 00:00:00.000Z']));

/** `{code: 0, msg}`: every success; `msg` is the platform's message for forwarded writes. */
export const SuccessBody = v.object({ code: v.literal(0), msg: v.string() });
const success = <E extends v.ObjectEntries>(entries: E) => v.object({ ...SuccessBody.entries, ...entries });

/** The spec's error form. 400 bodies list every problem in `data.issues`. */
export const ErrorBody = v.object({
  code: v.pipe(int, v.description('the HTTP status')),
  message: v.string(),
  data: v.object({ issues: v.optional(v.array(v.object({ field: v.string(), message: v.string() }))) }),
});

export const ItemsBody = success({ data: v.pipe(v.record(v.string(), int), v.description('item name → quantity')) });
export const LivenessBody = success({ liveness: v.number() });
const ids = (description: string) => v.pipe(v.array(v.string()), v.description(description));
export const PushAnswer = success({
  data: v.object({
    online: ids('given ids whose user had at least one open connection (on any node) when the push was accepted'),
    offline: ids('given ids of known users with no open connection'),
    unknown: ids('given ids that name no user this service knows'),
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

export const HealthBody = v.object({ status: v.literal('ok') });
const warnings = v.optional(v.pipe(v.array(v.string()), v.description('settings that leave some operations unavailable (e.g. no COMMUNITY_KEY)')));
export const ReadyBody = v.object({ status: v.literal('ready'), position: v.pipe(int, v.description('the log position the read models have applied')), warnings });
export const NotReadyBody = v.object({ status: v.literal('not ready'), reason: v.string(), position: int, warnings });

const actor = {
  position: v.pipe(int, v.description('global log position: the cursor for `after` / `before`')),
  time: SpecTimestamp,
  appId: text('the application that asked'),
  keyId: text('the API key it used'),
};
const page = <S extends v.GenericSchema>(item: S) =>
  success({
    data: v.object({
      items: v.pipe(v.array(item), v.description('oldest first')),
      next: v.optional(v.pipe(int, v.description('later entries exist: ask again with `after=<next>`'))),
      prev: v.optional(v.pipe(int, v.description('earlier entries exist: ask again with `before=<prev>`'))),
    }),
  });

export const PointsAuditEntry = v.object({
  ...actor,
  operationId: v.string(),
  request: v.object({ point: int, memo: v.string() }),
  outcome: v.object({
    status: v.pipe(
      v.picklist(['applied', 'rejected', 'failed', 'unknown', 'pending']),
      v.description('applied / rejected (the platform said no) / failed (surely not done) / unknown (sent, then no answer in time) / pending'),
    ),
    message: v.optional(text("the platform's message (applied, rejected)")),
    reason: v.optional(text('what went wrong (failed, unknown)')),
    at: v.optional(SpecTimestamp),
  }),
});
export const VipAuditEntry = v.object({
  ...actor,
  action: v.picklist(['granted', 'renewed']),
  recordId: v.string(),
  quality: v.picklist(['vip', 'svip']),
  expired: SpecTimestamp,
  previousExpired: v.optional(v.pipe(SpecTimestamp, v.description('the expiry a renewal replaced'))),
});
export const PointsAuditPage = page(PointsAuditEntry);
export const VipAuditPage = page(VipAuditEntry);
