// Every fact the service records. Event `data` is plain JSON; instants are ISO-8601 UTC strings.
import type { Grant } from './permissions.js';

/** Who asked: the application and the key it used. Carried by every event an admin call causes. */
export interface Actor {
  appId: string;
  keyId: string;
}

/** `by`: the operator who made the change, when one is known (absent for CLI changes). */
type ByOperator = { by?: Operator };
export type ApiKeyIssued = {
  type: 'ApiKeyIssued';
  /** `allApps`: the key reaches every app's records (auditors, operators), not only its own. */
  data: { keyId: string; appId: string; app: string; hash: string; permissions: Grant[]; expires: string | null; allApps?: true; at: string } & ByOperator;
};
export type ApiKeyDisabled = { type: 'ApiKeyDisabled'; data: { keyId: string; at: string } & ByOperator };
export type ApiKeyEnabled = { type: 'ApiKeyEnabled'; data: { keyId: string; at: string } & ByOperator };
export type ApiKeyRevoked = { type: 'ApiKeyRevoked'; data: { keyId: string; at: string } & ByOperator };
export type ApiKeyExpiryChanged = { type: 'ApiKeyExpiryChanged'; data: { keyId: string; expires: string | null; at: string } };
export type ApiKeyEvent = ApiKeyIssued | ApiKeyDisabled | ApiKeyEnabled | ApiKeyRevoked | ApiKeyExpiryChanged;

export interface Profile {
  name: string;
  nickname: string;
  avatar: string;
}
export type UserRegistered = { type: 'UserRegistered'; data: { userId: string; oId: string; at: string } & Profile };
export type UserProfileChanged = { type: 'UserProfileChanged'; data: { userId: string; oId: string; changes: Partial<Profile>; at: string } };
export type UserEvent = UserRegistered | UserProfileChanged;

export type VipQuality = 'vip' | 'svip';
export type VipGranted = {
  type: 'VipGranted';
  data: { recordId: string; userId: string; quality: VipQuality; expired: string; at: string } & Actor;
};
export type VipRenewed = {
  type: 'VipRenewed';
  data: { recordId: string; userId: string; quality: VipQuality; expired: string; previousExpired: string; at: string } & Actor;
};
export type VipEvent = VipGranted | VipRenewed;

/** Operations the platform owns; the service records each attempt and its outcome. */
export type PointsEditRequest = { point: number; memo: string };
export type MedalGiveRequest = { name: string; description: string; attr: string; data: string };
export type MedalRemoveRequest = { name: string };
export type ItemsEditRequest = { item: string; sum: number };

/**
 * `node`: the service process that sends it (a restart of that node closes out what it left
 * pending); `claim`: the Idempotency-Key stream the request holds, when it sent one. Both absent
 * in events from before they were recorded.
 */
type Requested<T extends string, R> = {
  type: T;
  /** `idempotencyKey`: the caller's Idempotency-Key as sent (`claim` names its stream), when it sent one. */
  data: { operationId: string; oId: string; userId: string; userName: string; request: R; at: string; node?: string; claim?: string; idempotencyKey?: string } & Actor;
};
export type PointsEditRequested = Requested<'PointsEditRequested', PointsEditRequest>;
export type MedalGiveRequested = Requested<'MedalGiveRequested', MedalGiveRequest>;
export type MedalRemoveRequested = Requested<'MedalRemoveRequested', MedalRemoveRequest>;
export type ItemsEditRequested = Requested<'ItemsEditRequested', ItemsEditRequest>;
export type OperationRequested = PointsEditRequested | MedalGiveRequested | MedalRemoveRequested | ItemsEditRequested;

type Outcome<T extends string, Extra = object> = { type: T; data: { operationId: string; oId: string; at: string } & Extra };
/** The platform did it. `bag` is the item bag after an items edit. */
export type OperationApplied = Outcome<'OperationApplied', { message: string; bag?: Record<string, number> }>;
/** The platform answered and said no (or, for items, silently did nothing). */
export type OperationRejected = Outcome<'OperationRejected', { message: string }>;
/** It surely did not happen: refused before anything reached the platform. */
export type OperationFailed = Outcome<'OperationFailed', { reason: string }>;
/** Sent, then no answer in time: it may or may not have happened. */
export type OperationOutcomeUnknown = Outcome<'OperationOutcomeUnknown', { reason: string }>;
/** Who settled an unknown outcome or changed a webhook endpoint: an operator, or an app through the admin API. */
export type Resolver = Operator | ({ kind: 'app'; allApps?: true } & Actor);
/** A person acting as operator: an OS user at the CLI, or `console:<oId>` in the console. */
export type Operator = { kind: 'operator'; name: string };
/** Someone who checked the platform settled an unknown outcome. */
export type OperationResolved = Outcome<'OperationResolved', { applied: boolean; note: string; by: Resolver }>;
export type OperationOutcome = OperationApplied | OperationRejected | OperationFailed | OperationOutcomeUnknown | OperationResolved;
/**
 * A retry took over the Idempotency-Key of a request presumed dead, which had bound the key to
 * this operation but not recorded it: the operation can never be recorded (nor sent) now.
 */
export type OperationAbandoned = { type: 'OperationAbandoned'; data: { operationId: string; at: string } };
/**
 * The sender's answer from the platform arrived after an operator had resolved the operation: kept
 * beside the resolution for an operator to review, never in its place (a resolution is final).
 */
export type OperationAnsweredAfterResolution = {
  type: 'OperationAnsweredAfterResolution';
  data: { operationId: string; oId: string; answer: SenderOutcomeType; detail: string; at: string };
};
type SenderOutcomeType = Exclude<OperationOutcome['type'], 'OperationResolved'>;
export type OperationEvent = OperationRequested | OperationOutcome | OperationAbandoned | OperationAnsweredAfterResolution;

export type MessagePushed = {
  type: 'MessagePushed';
  data: { messageId: string; name: string; data: Record<string, unknown>; oIds: string[]; userIds: string[]; at: string } & Actor;
};

/**
 * A realtime connection opened on `node` (absent in events from before nodes were recorded);
 * `session` when the request carried a live session cookie.
 */
export type ClientConnected = {
  type: 'ClientConnected';
  data: { clientId: string; node?: string; at: string; session?: { sessionId: string; userId: string; oId: string } } & ClientOpener;
};
/** Who opened a connection: the request's `Origin`, and the SHA-256 of the browser's binding cookie. */
export type ClientOpener = { origin?: string; browser?: string };
/**
 * The user behind a connection signed in through the login page. `sessionId`: the session that
 * sign-in started (its logout closes the connection); optional only for events written before
 * sessions were recorded.
 */
export type ClientSignedIn = { type: 'ClientSignedIn'; data: { clientId: string; userId: string; oId: string; sessionId?: string; at: string } };
/** `restart`: the node holding the connection died, and a later start of it closed it out. */
export type ClientDisconnected = { type: 'ClientDisconnected'; data: { clientId: string; reason: 'closed' | 'logout' | 'shutdown' | 'restart'; at: string } };
export type ClientEvent = ClientConnected | ClientSignedIn | ClientDisconnected;

/**
 * One sign-in attempt through the platform's OpenID page. The state is a bearer secret, so the
 * log holds only its SHA-256 (`stateHash`, also the stream id). Only its end is recorded
 * (LoginCompleted, LoginFailed); LoginStarted, LoginClaimed and LoginReleased are in logs written
 * before a login page stopped recording anything, and are read, never written.
 */
export type LoginStarted = {
  type: 'LoginStarted';
  /** `browser`: SHA-256 of the login cookie set with the state (absent before the binding existed). */
  data: { stateHash: string; clientId: string; callbackUrl: string; expires: string; at: string; browser?: string };
};
/**
 * A callback holds the attempt while it asks the platform; others delivering it are refused until
 * `until`. `expires`: when the attempt's state expires (absent in streams that began with LoginStarted).
 */
export type LoginClaimed = { type: 'LoginClaimed'; data: { stateHash: string; clientId: string; claim: string; until: string; expires?: string; at: string } };
/** The claim ended without an answer (the platform could not be reached): the attempt is open again. */
export type LoginReleased = { type: 'LoginReleased'; data: { stateHash: string; clientId: string; claim: string; at: string } };
export type LoginCompleted = {
  type: 'LoginCompleted';
  data: { stateHash: string; clientId: string; userId: string; oId: string; sessionId: string; at: string };
};
/** `not-operator`: a genuine account that the console does not admit (CONSOLE_ADMINS). */
export type LoginFailureReason = 'cancelled' | 'expired' | 'invalid-assertion' | 'unknown-user' | 'not-operator';
export type LoginFailed = { type: 'LoginFailed'; data: { stateHash: string; clientId: string; reason: LoginFailureReason; detail: string; at: string } };
export type LoginEvent = LoginStarted | LoginClaimed | LoginReleased | LoginCompleted | LoginFailed;

/** A browser session (the signed cookie carries its id). */
export type SessionStarted = { type: 'SessionStarted'; data: { sessionId: string; userId: string; oId: string; expires: string; at: string } };
export type SessionEnded = { type: 'SessionEnded'; data: { sessionId: string; at: string } };
export type SessionEvent = SessionStarted | SessionEnded;

/**
 * An admin POST sent with an Idempotency-Key: claimed (by `node`), possibly bound to the platform
 * operation it started, then its answer kept (or the claim released when it changed nothing).
 */
export type IdempotentRequestStarted = {
  type: 'IdempotentRequestStarted';
  /**
   * `claim`: names this claim, so that only the request holding it may bind, answer or free it.
   * `epoch`: names the key's current use: a takeover of a stale claim of the same request keeps
   * it, a new use of a free or expired key starts one, so what the request writes under a name
   * derived from it (a push's message id) is written once per use. Both absent in older events.
   */
  data: { appId: string; requestHash: string; at: string; expires: string; node?: string; claim?: string; epoch?: string };
  /** When the log recorded it, on the store's clock: present on an event read back from the store. */
  created?: string;
};
/** The request is about to send a platform operation: from now on the key answers for that operation. */
export type IdempotentOperationBound = { type: 'IdempotentOperationBound'; data: { appId: string; operationId: string; at: string } };
export type IdempotentRequestCompleted = {
  type: 'IdempotentRequestCompleted';
  data: { appId: string; requestHash: string; status: number; body: unknown; at: string; expires: string };
};
/** The request surely changed nothing (e.g. the platform was unreachable): the key is free again. */
export type IdempotentRequestReleased = { type: 'IdempotentRequestReleased'; data: { appId: string; at: string } };
export type IdempotencyEvent = IdempotentRequestStarted | IdempotentOperationBound | IdempotentRequestCompleted | IdempotentRequestReleased;

/** What an app's webhook endpoint hears of (docs/api.md, "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = [
  'client.signed_in',
  'client.disconnected',
  'message.delivered',
  'operation.outcome_known',
  'operation.outcome_unknown',
  'operation.resolved',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * An app's webhook endpoint. `secret`: the signing secret sealed with a key derived from the
 * session secret (src/system/sealed.ts), never in clear. `by`: the app's key or the operator that
 * made the change, when one is known (absent for CLI changes, whose metadata names the operator).
 */
export type WebhookRegistered = {
  type: 'WebhookRegistered';
  data: { endpointId: string; appId: string; url: string; events: WebhookEventType[]; description: string; secret: string; at: string; by?: Resolver };
};
/** A new secret signs from now on; the previous one still signs, second, until `previousUntil`. */
export type WebhookSecretRotated = { type: 'WebhookSecretRotated'; data: { endpointId: string; secret: string; previousUntil: string; at: string; by?: Resolver } };
/** `failing`: every delivery failed for the whole retry period, and the last one was given up. */
export type WebhookDisabled = { type: 'WebhookDisabled'; data: { endpointId: string; reason: 'requested' | 'failing'; detail: string; at: string; by?: Resolver } };
export type WebhookEnabled = { type: 'WebhookEnabled'; data: { endpointId: string; at: string; by?: Resolver } };
export type WebhookDeleted = { type: 'WebhookDeleted'; data: { endpointId: string; at: string; by?: Resolver } };
export type WebhookEndpointEvent = WebhookRegistered | WebhookSecretRotated | WebhookDisabled | WebhookEnabled | WebhookDeleted;

/** What one delivery sends (the same on every attempt): the event and the order it keeps. */
export interface WebhookPayload {
  eventId: string;
  type: WebhookEventType;
  /** The JSON body, exactly as sent. */
  body: string;
  /** Deliveries with the same key (one user's events) to one endpoint go one after another, in log order. */
  orderKey?: string;
}
/**
 * A node is about to send attempt `attempt` of a delivery (an event to one endpoint): recorded
 * before sending, with the delivery stream's revision as expected, so that two nodes cannot both
 * record (and send) the same attempt. The first attempt carries what is sent.
 */
export type WebhookAttemptStarted = {
  type: 'WebhookAttemptStarted';
  data: { deliveryId: string; endpointId: string; attempt: number; node: string; at: string; payload?: WebhookPayload };
};
/**
 * How an attempt ended. `status`: the receiver's HTTP status, when it answered; `response`: the
 * first bytes of its body; `retryAt`: when the next attempt may start (absent after a success, or
 * when the retry period is over: the delivery is given up).
 */
export type WebhookAttemptFinished = {
  type: 'WebhookAttemptFinished';
  data: {
    deliveryId: string;
    endpointId: string;
    attempt: number;
    delivered: boolean;
    status?: number;
    error?: string;
    response?: string;
    durationMs: number;
    retryAt?: string;
    at: string;
  };
};
/** Someone asked for a delivery to be sent again: it is due now, with a new retry period. `attempts`: those recorded before. */
export type WebhookResendRequested = {
  type: 'WebhookResendRequested';
  data: { deliveryId: string; endpointId: string; payload: WebhookPayload; attempts: number; at: string; by?: Resolver };
};
export type WebhookDeliveryEvent = WebhookAttemptStarted | WebhookAttemptFinished | WebhookResendRequested;

/**
 * Appends failed on `node` since `failedSince` and succeed again (the write that shows it). Not a
 * DomainEvent: no read model folds it; it is in the log for whoever reads about an outage.
 */
export type StoreWritesRecovered = { type: 'StoreWritesRecovered'; data: { node: string; failedSince: string; at: string } };

/**
 * Retention is about to delete these streams (what anonymous traffic left behind, expired
 * Idempotency-Key streams): the read models that keep any of them let them go. Recorded before
 * the deletion, so that a start from a read-model snapshot taken while one of them was still
 * open ends where a replay of the shortened log does; a deletion that then fails leaves both in
 * the log, and a replay still ends there.
 */
export type StreamsDeleted = { type: 'StreamsDeleted'; data: { streams: string[]; node: string; at: string } };

export type DomainEvent =
  | ApiKeyEvent
  | UserEvent
  | VipEvent
  | OperationEvent
  | MessagePushed
  | ClientEvent
  | LoginEvent
  | SessionEvent
  | IdempotencyEvent
  | WebhookEndpointEvent
  | WebhookDeliveryEvent
  | StreamsDeleted;
export type DomainEventType = DomainEvent['type'];

/** Stream names: `<category>-<id>` (docs/architecture.md, "Event store"). */
export const streams = {
  apiKey: (keyId: string) => `apikey-${keyId}`,
  user: (oId: string) => `user-${oId}`,
  vip: (userId: string) => `vip-${userId}`,
  operation: (operationId: string) => `operation-${operationId}`,
  message: (messageId: string) => `message-${messageId}`,
  client: (clientId: string) => `client-${clientId}`,
  login: (stateHash: string) => `login-${stateHash}`,
  session: (sessionId: string) => `session-${sessionId}`,
  idempotency: (appId: string, keyHash: string) => `idempotency-${appId}-${keyHash}`,
  store: (nodeId: string) => `store-${nodeId}`,
  /** What retention deleted (StreamsDeleted). */
  retention: () => 'retention',
  webhook: (endpointId: string) => `webhook-${endpointId}`,
  /** One event (by its log position) to one endpoint: its attempts. */
  webhookDelivery: (deliveryId: string) => `webhookdelivery-${deliveryId}`,
};
