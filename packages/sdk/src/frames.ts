// The realtime stream's frames (`data` of each SSE event), by the names the service's OpenAPI
// document gives them.
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/** The user in `PB_CONNECT` and `login` frames. */
export type RealtimeUser = Schemas['RealtimeUser'];
/** First frame of every connection, reconnections included: each connection is a new client. */
export type PbConnectFrame = Schemas['PbConnectFrame'];
/** The user signed in through the login page opened with this connection's `client_id`. */
export type LoginFrame = Schemas['LoginFrame'];
/** A push (`POST /adm/message/push`) that named this connection's user. */
export type MessageFrame = Schemas['MessageFrame'];
