// The realtime stream's frames (`data` of each SSE event), as the service sends them. The
// OpenAPI document describes them in prose only so far, so these follow the spec's section 6 and
// the service's realtime client, under the component names the document is to give them.

/** The user in `PB_CONNECT` and `login` frames. */
export interface RealtimeUser {
  /** This service's user id (`userIds` of a push). */
  id: string;
  /** The community's user id. */
  oId: string;
  name: string;
  nickname: string;
  avatar: string;
  email: string;
  emailVisibility: boolean;
  verified: boolean;
  collectionId: string;
  collectionName: string;
  /** `YYYY-MM-DD HH:MM:SS.mmmZ` (UTC) */
  created: string;
  /** `YYYY-MM-DD HH:MM:SS.mmmZ` (UTC) */
  updated: string;
}

/** First frame of every connection, reconnections included: each connection is a new client. */
export type PbConnectFrame = { client_id: string; login_status: false } | { client_id: string; login_status: true; user: RealtimeUser };

/** The user signed in through the login page opened with this connection's `client_id`. */
export interface LoginFrame {
  action: 'login';
  user: RealtimeUser;
}

/** A push (`POST /adm/message/push`) that named this connection's user. */
export interface MessageFrame {
  /** The application whose API key pushed it. */
  app_id: string;
  name: string;
  data: Record<string, unknown>;
}
