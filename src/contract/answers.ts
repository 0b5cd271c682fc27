// What the API answers, as valibot schemas: the OpenAPI document converts them like the request
// schemas, the read side builds its answers as their types, and the e2e suites parse real
// answers with them, so the documented shapes cannot drift from what the service sends.
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
    counts: v.optional(
      v.pipe(
        v.object({ online: v.number(), offline: v.number(), unknown: v.number() }),
        v.description('only in a retry\'s answer (Idempotent-Replayed) to a push whose lists were longer than 100 ids: the lists then hold their first 100 ids, and these are their full lengths'),
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

export const ResolveAnswer = success({
  data: v.object({ operationId: v.string(), status: v.pipe(v.picklist(['applied', 'failed']), v.description('what the operation now counts as')) }),
});

/** Any JSON object: what a push carries in `data`, delivered as it was given. */
const FreeObject = v.record(v.string(), v.unknown());

/** The user in `PB_CONNECT` and `login` frames (spec §2.1). */
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
/** Realtime frames (spec §6): the JSON `data` line of each server-sent event, by event name. */
export const PbConnectFrame = v.object({ client_id: v.string(), login_status: v.boolean(), user: v.optional(v.pipe(RealtimeUser, v.description('when `login_status` is true'))) });
export const LoginFrame = v.object({ action: v.literal('login'), user: RealtimeUser });
export const MessageFrame = v.object({
  app_id: v.pipe(v.string(), v.description('the id of the application that pushed it')),
  name: v.pipe(v.string(), v.description('the push\'s `name`')),
  data: v.pipe(FreeObject, v.description('the push\'s `data`, as given')),
});

/** `GET /` for a program: what this is and where its documentation is. */
export const ServiceBody = v.object({ service: v.string(), version: v.string(), links: v.record(v.string(), v.string()) });

export const HealthBody = v.object({ status: v.literal('ok') });
const warnings = v.optional(v.pipe(v.array(v.string()), v.description('settings that leave some operations unavailable (e.g. no COMMUNITY_KEY)')));
const clockOffsetMs = v.pipe(v.number(), v.description("this node's clock minus the log's clock, in ms (not ready past CLOCK_MAX_OFFSET_MS)"));
export const ReadyBody = v.object({ status: v.literal('ready'), position: v.pipe(int, v.description('the log position the read models have applied')), clockOffsetMs, warnings });
export const NotReadyBody = v.object({ status: v.literal('not ready'), reason: v.string(), position: int, clockOffsetMs, warnings });

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
    resolution: v.optional(
      v.pipe(
        v.object({
          applied: v.boolean(),
          note: v.string(),
          by: v.union([v.object({ kind: v.literal('operator'), name: v.string() }), v.object({ kind: v.literal('app'), appId: v.string(), keyId: v.string(), allApps: v.optional(v.literal(true)) })]),
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
