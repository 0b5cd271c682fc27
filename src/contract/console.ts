// The console's JSON API (/console/api/*), as valibot schemas: the handlers validate what they
// take with them and build what they answer as their types, and the front-end reads the same
// types, so the two sides cannot drift.
import * as v from 'valibot';
import { PERMISSIONS } from '../domain/permissions.js';
import { FreeObject } from './requests.js';
import { OID_PATTERN, OID_RULE } from '../domain/user.js';
import { APP_ID, APP_ID_RULE } from '../domain/apiKey.js';
import { WebhookAttempt, WebhookEndpoint } from './answers.js';
import { WebhookId } from './requests.js';

const isoInstant = v.pipe(v.string(), v.isoTimestamp());

/** Who is signed in, and the token their changes carry in X-Console-Token. */
export const Me = v.object({
  oId: v.string(),
  name: v.string(),
  nickname: v.string(),
  expires: v.string(),
  token: v.string(),
});
export type Me = v.InferOutput<typeof Me>;

export const Done = v.object({ ok: v.literal(true) });
export type Done = v.InferOutput<typeof Done>;

// Requests.

const grant = v.picklist([...PERMISSIONS, '*'], `must be one of ${PERMISSIONS.join(', ')}, or *`);

export const KeyCreateBody = v.object({
  /** The app's exact id: an existing app's, or a new one's. */
  appId: v.optional(v.pipe(v.string('must be a string'), v.trim(), v.regex(APP_ID, `must be ${APP_ID_RULE}`))),
  /** The app's name, for a new app. */
  app: v.optional(v.pipe(v.string('must be a string'), v.trim(), v.maxLength(80, 'must be at most 80 characters'))),
  /** The key reaches every app's records (audits, resolutions). */
  allApps: v.optional(v.boolean('must be true or false'), false),
  permissions: v.pipe(v.array(grant, 'must be a list of permissions'), v.minLength(1, 'must name at least one permission')),
  expires: v.optional(v.nullable(v.pipe(v.string('must be "YYYY-MM-DD HH:MM:SS" (UTC) or null'), v.trim())), null),
});

export const KeyActionParams = v.object({
  keyId: v.pipe(v.string(), v.regex(/^[a-z0-9]{15}$/, 'must be a key id (15 characters of a-z and 0-9)')),
  action: v.picklist(['disable', 'enable', 'revoke'], 'must be disable, enable or revoke'),
});

export const OIdParam = v.object({ oId: v.pipe(v.string(), v.regex(OID_PATTERN, `must be the platform's user id (${OID_RULE})`)) });

export const UserSearchQuery = v.object({
  /** Part of an oId, a name or a nickname; absent or blank: the newest users. */
  q: v.optional(v.pipe(v.string('must be given once'), v.trim(), v.maxLength(100, 'must be at most 100 characters'))),
});

export const TestPushBody = v.object({
  name: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'is required'), v.maxLength(64, 'must be at most 64 characters')),
  data: FreeObject,
});

export { OperationIdParam, ResolveBody, WebhookCreateBody, WebhookEventParams, WebhookIdParam } from './requests.js';

export const WebhookActionParams = v.object({
  id: WebhookId,
  action: v.picklist(['disable', 'enable', 'rotate', 'delete'], 'must be disable, enable, rotate or delete'),
});

const position = (description: string) =>
  v.pipe(v.string('must be given once'), v.regex(/^\d{1,15}$/, 'must be a log position (a whole number)'), v.transform(Number), v.description(description));
const filterText = (what: string) => v.optional(v.pipe(v.string('must be given once'), v.trim(), v.maxLength(200, 'must be at most 200 characters'), v.description(what)));

export const EventsQuery = v.object({
  after: v.optional(position('events after this position'), '0'),
  limit: v.optional(
    v.pipe(
      v.string('must be given once'),
      v.regex(/^\d{1,3}$/, 'must be a whole number from 1 to 200'),
      v.transform(Number),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(200, 'must be at most 200'),
    ),
    '50',
  ),
  stream: filterText('one stream, exactly'),
  category: filterText('streams `<category>-…`'),
  type: filterText('an event type, exactly'),
});
export type EventsQuery = v.InferOutput<typeof EventsQuery>;

// Answers.

export const KeyView = v.object({
  id: v.string(),
  app: v.string(),
  appId: v.string(),
  permissions: v.array(v.string()),
  /** Reaches every app's records, not only its own app's. */
  allApps: v.boolean(),
  status: v.picklist(['enabled', 'disabled', 'revoked', 'expired']),
  created: isoInstant,
  expires: v.nullable(isoInstant),
  /** The last change recorded with this key (reads are not recorded). */
  lastUsed: v.nullable(isoInstant),
});
export type KeyView = v.InferOutput<typeof KeyView>;
export const KeyList = v.object({ keys: v.array(KeyView) });
export type KeyList = v.InferOutput<typeof KeyList>;
export const KeyCreated = v.object({ key: KeyView, secret: v.string() });
export type KeyCreated = v.InferOutput<typeof KeyCreated>;

export const UserBrief = v.object({ oId: v.string(), userId: v.string(), name: v.string(), nickname: v.string(), registered: isoInstant, online: v.boolean() });
export type UserBrief = v.InferOutput<typeof UserBrief>;
export const UserList = v.object({ users: v.array(UserBrief) });
export type UserList = v.InferOutput<typeof UserList>;

const Resolution = v.object({
  applied: v.boolean(),
  note: v.string(),
  by: v.object({ kind: v.string(), name: v.optional(v.string()), appId: v.optional(v.string()), keyId: v.optional(v.string()) }),
  at: isoInstant,
});

export const OperationView = v.object({
  operationId: v.string(),
  position: v.number(),
  kind: v.string(),
  oId: v.string(),
  userName: v.string(),
  request: v.record(v.string(), v.unknown()),
  requestedAt: isoInstant,
  appId: v.string(),
  keyId: v.string(),
  node: v.optional(v.string()),
  /** The Idempotency-Key stream (internal); `idempotencyKey` is the key the caller sent. */
  claim: v.optional(v.string()),
  idempotencyKey: v.optional(v.string()),
  requestId: v.optional(v.string()),
  status: v.picklist(['pending', 'applied', 'rejected', 'failed', 'unknown']),
  outcome: v.optional(v.object({ type: v.string(), detail: v.string(), at: isoInstant })),
  unknownReason: v.optional(v.string()),
  resolution: v.optional(Resolution),
  /** The platform's answer to the sender when it came after the resolution: kept beside it. */
  answeredAfterResolution: v.optional(v.object({ answer: v.string(), detail: v.string(), at: isoInstant })),
});
export type OperationView = v.InferOutput<typeof OperationView>;
export const OperationList = v.object({ operations: v.array(OperationView) });
export type OperationList = v.InferOutput<typeof OperationList>;

export const UserDetail = v.object({
  user: UserBrief,
  avatar: v.string(),
  vip: v.array(v.object({ id: v.string(), quality: v.string(), expired: isoInstant, created: isoInstant, updated: isoInstant })),
  vipHistory: v.array(
    v.object({ position: v.number(), action: v.string(), quality: v.string(), expired: isoInstant, previousExpired: v.optional(isoInstant), appId: v.string(), at: isoInstant }),
  ),
  operations: v.array(OperationView),
  sessions: v.array(v.object({ position: v.number(), started: isoInstant, expires: isoInstant, ended: v.optional(isoInstant), live: v.boolean() })),
  connections: v.array(v.object({ clientId: v.string(), node: v.nullable(v.string()) })),
});
export type UserDetail = v.InferOutput<typeof UserDetail>;

/** Who is online now (the Online page): presence as `/adm/presence` judges it, with names and the nodes holding them. */
export const OnlineList = v.object({
  users: v.array(v.object({ oId: v.string(), name: v.string(), clients: v.number(), since: isoInstant, nodes: v.array(v.string()) })),
  /** Users online in all; `users` holds the first of them, by their earliest sign-in. */
  total: v.number(),
});
export type OnlineList = v.InferOutput<typeof OnlineList>;

export const PushSent = v.object({ messageId: v.string(), online: v.boolean() });
export type PushSent = v.InferOutput<typeof PushSent>;

const counts = { applied: v.number(), rejected: v.number(), failed: v.number(), unknown: v.number(), resolved: v.number() };
const health = { ok: v.number(), rejected: v.number(), failed: v.number(), timeout: v.number() };
export const Overview = v.object({
  at: isoInstant,
  node: v.string(),
  /**
   * Every node process from the store's heartbeats (several rows for a node that restarted), and
   * nodes that wrote to the log with no heartbeat left (stopped cleanly, or long gone).
   * `since`: started (live), or its last heartbeat (lapsed, gone), or its last write (no heartbeat).
   */
  nodes: v.array(
    v.object({
      node: v.string(),
      instance: v.optional(v.string()),
      state: v.picklist(['live', 'lapsed', 'gone']),
      since: isoInstant,
      lastBeat: v.optional(isoInstant),
      /** Its last event in the log. */
      lastWrite: v.optional(isoInstant),
      /** The node serving this answer. */
      self: v.boolean(),
    }),
  ),
  connections: v.object({ anonymous: v.number(), signedIn: v.number() }),
  outcomesPerMinute: v.array(v.object({ minute: isoInstant, ...counts })),
  platformCalls: v.object({ ...health, byEndpoint: v.array(v.object({ endpoint: v.string(), ...health })) }),
  lag: v.object({ head: v.number(), readModels: v.number() }),
  unknownOutcomes: v.number(),
});
export type Overview = v.InferOutput<typeof Overview>;

export const EventView = v.object({
  position: v.number(),
  stream: v.string(),
  revision: v.number(),
  type: v.string(),
  data: v.unknown(),
  metadata: v.optional(v.record(v.string(), v.unknown())),
  created: isoInstant,
});
export type EventView = v.InferOutput<typeof EventView>;
export const EventsPage = v.object({
  items: v.array(EventView),
  /** Ask again with `after=next` for later events; absent at the head of the log. */
  next: v.optional(v.number()),
  head: v.number(),
});
export type EventsPage = v.InferOutput<typeof EventsPage>;

/** Webhooks: every app's endpoints, and the apps one can be added for. */
export const WebhookPage = v.object({ apps: v.array(v.object({ appId: v.string(), app: v.string() })), endpoints: v.array(WebhookEndpoint) });
export type WebhookPage = v.InferOutput<typeof WebhookPage>;
export type WebhookEndpointView = v.InferOutput<typeof WebhookEndpoint>;
export type WebhookAttemptView = v.InferOutput<typeof WebhookAttempt>;
export const WebhookDetail = v.object({ endpoint: WebhookEndpoint, attempts: v.array(WebhookAttempt) });
export type WebhookDetail = v.InferOutput<typeof WebhookDetail>;
/** After registering or rotating: the secret, shown this once. Deleting answers no endpoint. */
export const WebhookChanged = v.object({ endpoint: v.optional(WebhookEndpoint), secret: v.optional(v.string()), deleted: v.optional(v.literal(true)) });
export type WebhookChanged = v.InferOutput<typeof WebhookChanged>;
export const WebhookResentView = v.object({ eventId: v.string(), deliveryId: v.string() });
export type WebhookResentView = v.InferOutput<typeof WebhookResentView>;
