// Helpers for the realtime suites: a real EventSource (the `eventsource` package) that collects
// frames and lets a test await the next one, and the OpenID dance against the simulator.
import { EventSource } from 'eventsource';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, timeout } from 'rxjs';
import type * as v from 'valibot';
import type { LoginFrame, MessageFrame, PbConnectFrame } from '../../src/contract/answers.js';
import type { RecordedEvent } from '../../src/store/port.js';
import type { Harness } from './harness.js';

export const FRAME_TIMEOUT_MS = 5000;

/** The JSON `data` of each event, as the service sends it (the suites check it). */
export interface FrameData {
  PB_CONNECT: v.InferOutput<typeof PbConnectFrame>;
  login: v.InferOutput<typeof LoginFrame>;
  message: v.InferOutput<typeof MessageFrame>;
}
export type FrameEvent = keyof FrameData;

/** A frame received, its data typed by its event. */
export type ReceivedFrame<E extends FrameEvent = FrameEvent> = { [K in E]: { id: string; event: K; data: FrameData[K] } }[E];

export interface StreamOptions {
  /** `name=value` sent as the Cookie header. */
  cookie?: string;
  /** Sent as the Last-Event-ID header on the first connection. */
  lastEventId?: string;
  /** Extra headers (e.g. Origin). */
  headers?: Record<string, string>;
}

export interface Stream {
  /** Every frame received so far, in order. */
  readonly frames: ReceivedFrame[];
  /** Status and headers of the first response. */
  readonly response: Promise<{ status: number; headers: Headers }>;
  /** The next frame not yet taken (of this event type, skipping none: a different type fails). */
  next<E extends FrameEvent = FrameEvent>(event?: E, timeoutMs?: number): Promise<ReceivedFrame<E>>;
  /** Resolves when the server ends the stream (EventSource reports an error and would reconnect). */
  ended(timeoutMs?: number): Promise<void>;
  close(): void;
}

export function openStream(url: string, options: StreamOptions = {}): Stream {
  const frames: ReceivedFrame[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  let endedResolve: (() => void) | undefined;
  const endedPromise = new Promise<void>((resolve) => (endedResolve = resolve));
  let responseResolve!: (value: { status: number; headers: Headers }) => void;
  const response = new Promise<{ status: number; headers: Headers }>((resolve) => (responseResolve = resolve));
  let first = true;

  const source = new EventSource(url, {
    fetch: async (input, init) => {
      const headers: Record<string, string> = { ...init.headers, ...options.headers };
      if (options.cookie) headers.Cookie = options.cookie;
      if (first && options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
      const res = await streamFetch(input, { signal: init.signal, headers });
      if (first) responseResolve({ status: res.status, headers: res.headers });
      first = false;
      return res;
    },
  });
  const collect = (event: MessageEvent) => {
    frames.push({ id: event.lastEventId, event: event.type, data: JSON.parse(event.data) } as ReceivedFrame);
    wake?.();
  };
  for (const type of ['PB_CONNECT', 'login', 'message']) source.addEventListener(type, collect);
  source.addEventListener('error', () => endedResolve?.());

  return {
    frames,
    response,
    async next<E extends FrameEvent>(event?: E, timeoutMs = FRAME_TIMEOUT_MS): Promise<ReceivedFrame<E>> {
      const deadline = Date.now() + timeoutMs;
      while (taken >= frames.length) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${event ?? ''} frame within ${timeoutMs} ms (got ${JSON.stringify(frames.map((f) => f.event))})`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      const frame = frames[taken++]!;
      if (event !== undefined) assert.is(frame.event, event, `expected a ${event} frame, got ${frame.event}: ${JSON.stringify(frame.data)}`);
      return frame as ReceivedFrame<E>;
    },
    ended(timeoutMs = FRAME_TIMEOUT_MS) {
      return withTimeout(endedPromise, timeoutMs, 'the stream did not end');
    },
    close() {
      source.close();
    },
  };
}

/**
 * A fetch for streams on a connection of its own (node:http, no pool). Node's fetch pool leaves a
 * spare socket open after an aborted stream, and the service's graceful close then waits for the
 * client to drop it; a browser would not keep it either.
 */
const streamFetch = (url: string | URL, init: { signal?: AbortSignal; headers: Record<string, string> }) =>
  new Promise<Response>((resolve, reject) => {
    const req = httpRequest(url, { headers: init.headers, agent: false, signal: init.signal }, (res) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
      }
      resolve(new Response(Readable.toWeb(res) as ReadableStream, { status: res.statusCode, headers }));
    });
    req.on('error', reject);
    req.end();
  });

/**
 * The cookies a browser would hold for the sign-in, so the helpers act as the one browser that
 * opened the connection: its client binding cookie by client id, its login cookie by state.
 */
const clientCookies = new Map<string, string>();
const loginCookies = new Map<string, string>();

/** `name=value` of the named cookie among Set-Cookie values, if set (and not cleared). */
export function cookieFrom(setCookie: string[], name: string): string | undefined {
  return setCookie.map((c) => c.split(';')[0]!).find((c) => c.startsWith(`${name}=`) && c !== `${name}=`);
}

/** The state of a return_to or callback URL. */
const stateOf = (url: string) => new URL(url).searchParams.get('state') ?? '';

/** Opens a stream and waits for its PB_CONNECT. */
export async function connect(h: Harness | { url: string }, options: StreamOptions & { query?: string } = {}) {
  const stream = openStream(`${h.url}/api/realtime${options.query ?? ''}`, options);
  const hello = await stream.next('PB_CONNECT');
  const clientId = hello.data.client_id;
  const binding = cookieFrom((await stream.response).headers.getSetCookie(), 'cb_client');
  if (binding) clientCookies.set(clientId, binding);
  return { stream, hello, clientId, binding };
}

const SIM_HEADERS = { 'User-Agent': 'community-bridge-tests' };

/** GET without following redirects. */
export async function visit(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { redirect: 'manual', headers: { ...SIM_HEADERS, ...headers } });
  return { status: res.status, location: res.headers.get('location') ?? undefined, headers: res.headers, text: await res.text() };
}

/**
 * The service's login page, opened by the browser that holds the connection: the URL of the
 * platform's OpenID page it redirects to. The login cookie it sets is kept for the callback.
 */
export async function startLogin(h: { url: string }, clientId: string, community = 'fishpi'): Promise<string> {
  const binding = clientCookies.get(clientId);
  const res = await visit(`${h.url}/${community}/login?client_id=${encodeURIComponent(clientId)}`, binding ? { Cookie: binding } : {});
  assert.is(res.status, 302, res.text);
  const login = cookieFrom(res.headers.getSetCookie(), 'cb_login');
  assert.ok(login, 'the login page sets the login cookie');
  loginCookies.set(stateOf(new URL(res.location!).searchParams.get('openid.return_to')!), login!);
  return res.location!;
}

/** The platform's consent, skipped with `sim_user`: the callback URL carrying the assertion. */
export async function platformAssertion(platformUrl: string, oId: string): Promise<string> {
  const res = await visit(`${platformUrl}&sim_user=${encodeURIComponent(oId)}`);
  assert.is(res.status, 302, res.text);
  return res.location!;
}

/**
 * The service's callback, in the browser that started the sign-in (its login cookie), or with
 * the `Cookie` header given (`''`: none). `cookie` is the session cookie (`name=value`) when set.
 */
export async function callback(url: string, options: { cookieHeader?: string } = {}) {
  const cookieHeader = options.cookieHeader ?? loginCookies.get(stateOf(url)) ?? '';
  const res = await visit(url, cookieHeader ? { Cookie: cookieHeader } : {});
  const setCookie = res.headers.getSetCookie();
  return { ...res, setCookie, cookie: cookieFrom(setCookie, 'cb_session') };
}

/** The whole OpenID dance for a connected client; returns the session cookie. */
export async function signIn(h: { url: string }, clientId: string, oId: string): Promise<string> {
  const res = await callback(await platformAssertion(await startLogin(h, clientId), oId));
  assert.is(res.status, 200, res.text);
  assert.ok(res.cookie, 'a session cookie is set');
  return res.cookie!;
}

/** The callback URL with some query parameters replaced (a forged assertion). */
export function tamper(url: string, changes: Record<string, string | null>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) target.searchParams.delete(name);
    else target.searchParams.set(name, value);
  }
  return target.toString();
}

/** Resolves with the next event the service applies that matches (e.g. a ClientDisconnected). */
export function applied(h: Harness | { service: Harness['service'] }, match: (event: RecordedEvent) => boolean, timeoutMs = FRAME_TIMEOUT_MS) {
  return firstValueFrom(h.service.deps.runner.applied$.pipe(filter(match), timeout(timeoutMs)));
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The spec's user timestamp form. */
export const SPEC_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;
