// The browser side: the realtime stream (`GET /api/realtime`) over EventSource, its frames
// parsed and typed, and the sign-in popup. Reconnecting, and resuming with Last-Event-ID, is the
// EventSource's own job; every connection it opens is a new client with a new client_id.
import type { LoginFrame, MessageFrame, PbConnectFrame, RealtimeUser } from './frames.js';
import { errorFrom, readAnswer } from './transport.js';

/** The part of the EventSource API used here (the browser's, or e.g. the `eventsource` package's). */
export interface EventSourceLike {
  readonly readyState: number;
  addEventListener(type: string, listener: (event: { data?: unknown }) => void): void;
  close(): void;
}
export type EventSourceConstructor = new (url: string, init?: { withCredentials?: boolean }) => EventSourceLike;

export interface RealtimeOptions {
  /** Where the service is, e.g. `https://bridge.example.com`. */
  baseUrl: string;
  /** The service's COMMUNITY_NAME, the login page's path segment (default `fishpi`). */
  communityName?: string;
  /**
   * Send the service's cookies (default true): a returning user starts signed in, and the login
   * page recognises the browser that opened the stream. A page on another origin must be listed
   * in the service's CORS_ORIGINS.
   */
  withCredentials?: boolean;
  /** Every connection, the first and each reconnection: its client id, and the user when already signed in. */
  onConnect?(frame: PbConnectFrame): void;
  /** The user finished signing in through the popup. */
  onLogin?(frame: LoginFrame): void;
  onMessage?(frame: MessageFrame): void;
  /** The stream broke; `reconnecting` is false when the browser gave up (e.g. the service refused it). */
  onError?(info: { reconnecting: boolean }): void;
  /** Default: the global EventSource. */
  EventSource?: EventSourceConstructor;
}

export interface RealtimeConnection {
  /** The current connection's client id; undefined until the first `PB_CONNECT`. */
  readonly clientId: string | undefined;
  /** The signed-in user, if any. */
  readonly user: RealtimeUser | undefined;
  /**
   * Opens the login page for the current client in a popup. Call it from a user gesture (a click
   * handler), as browsers block popups opened otherwise. Returns false when the popup was blocked.
   */
  signIn(): boolean;
  /** Ends the browser's session; the stream then reconnects as a client nobody signed in to. */
  signOut(): Promise<void>;
  close(): void;
}

const CLOSED = 2;
const LOGIN_WINDOW = { name: 'community-bridge-login', features: 'width=520,height=680' };

export function connectRealtime(options: RealtimeOptions): RealtimeConnection {
  const base = options.baseUrl.replace(/\/+$/, '');
  const withCredentials = options.withCredentials ?? true;
  const Source = options.EventSource ?? (globalThis.EventSource as EventSourceConstructor | undefined);
  if (!Source) throw new Error('No EventSource here: pass one as the EventSource option');
  const source = new Source(`${base}/api/realtime`, { withCredentials });
  let clientId: string | undefined;
  let user: RealtimeUser | undefined;

  const on = <T>(type: string, handle: (frame: T) => void) => source.addEventListener(type, (event) => handle(JSON.parse(String(event.data)) as T));
  on<PbConnectFrame>('PB_CONNECT', (frame) => {
    clientId = frame.client_id;
    user = frame.login_status ? frame.user : undefined;
    options.onConnect?.(frame);
  });
  on<LoginFrame>('login', (frame) => {
    user = frame.user;
    options.onLogin?.(frame);
  });
  on<MessageFrame>('message', (frame) => options.onMessage?.(frame));
  source.addEventListener('error', () => options.onError?.({ reconnecting: source.readyState !== CLOSED }));

  return {
    get clientId() {
      return clientId;
    },
    get user() {
      return user;
    },
    signIn() {
      if (clientId === undefined) throw new Error('Not connected yet: call signIn() after onConnect');
      const community = encodeURIComponent(options.communityName ?? 'fishpi');
      const url = `${base}/${community}/login?client_id=${encodeURIComponent(clientId)}`;
      return window.open(url, LOGIN_WINDOW.name, LOGIN_WINDOW.features) !== null;
    },
    async signOut() {
      const response = await fetch(`${base}/api/logout`, { method: 'POST', credentials: withCredentials ? 'include' : 'same-origin' });
      // No X-Request-Id is sent: a page on another origin would need the service to allow the header.
      if (!response.ok) throw errorFrom(await readAnswer(response, undefined));
    },
    close() {
      source.close();
    },
  };
}
