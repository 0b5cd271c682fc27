// @community-bridge/sdk: the admin client for application servers, the realtime client for browsers,
// the webhook signature check.
export { createAdminClient, type AdminClient, type AdminClientOptions, type AuditPaging, type CallOptions, type OperationFilter } from './admin.js';
export {
  AnswerTooLargeError,
  AuthError,
  BridgeError,
  BridgeRedirectError,
  ConnectionError,
  OutcomeUnknownError,
  PermissionError,
  PlatformError,
  RateLimitError,
  ValidationError,
  type BridgeErrorData,
  type BridgeErrorInit,
  type BridgeErrorReason,
  type ClientErrorReason,
  type ServiceErrorReason,
} from './errors.js';
export type { LoginFrame, MessageFrame, PbConnectFrame, RealtimeUser } from './frames.js';
export { connectRealtime, type EventSourceConstructor, type EventSourceLike, type RealtimeConnection, type RealtimeOptions } from './realtime.js';
export type { Fetch, FetchResponse } from './transport.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  MAX_SIGNATURE_HEADER_LENGTH,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  WebhookSignatureError,
  type VerifyWebhookOptions,
  type WebhookSignatureFailure,
} from './webhooks.js';
export type * from './types.js';
