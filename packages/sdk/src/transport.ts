// One admin API call: JSON in and out, the apiKey header, one deadline over every attempt (the
// answer's body included), an answer read up to maxAnswerBytes and no further, and
// retries (retry.ts) of the failures that sending again can mend, with the same Idempotency-Key
// and X-Request-Id, so the service answers from its record instead of acting twice and its log
// ties the attempts together. The key is sent to baseUrl's origin only (redirects are not
// followed) and kept out of every error.
import {
  AnswerTooLargeError,
  AuthError,
  BridgeError,
  ConnectionError,
  OutcomeUnknownError,
  PermissionError,
  PlatformError,
  RateLimitError,
  ValidationError,
  type BridgeErrorData,
  type BridgeErrorInit,
  type BridgeErrorReason,
} from './errors.js';
import { createRedactor, type Redactor } from './redact.js';
import { isRedirect, redirectError } from './redirect.js';
import { backoff, retryAfterSecondsOf, retryDelay } from './retry.js';
import { DEFAULT_MAX_ANSWER_BYTES, readSettings } from './settings.js';

/** The part of a fetch Response the client reads. */
export interface FetchResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  /** `'opaqueredirect'` is how a browser answers a redirect it was told not to follow. */
  readonly type?: string;
  /**
   * Read chunk by chunk when it has a reader (fetch's ReadableStream), so that no more than the
   * bound is ever held; cancelled when the answer is not read (a redirect, one too large).
   */
  readonly body?: { cancel(): Promise<void>; getReader?(): BodyReader } | null;
}

/** The part of a ReadableStream reader the client uses. */
export interface BodyReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * `globalThis.fetch`, or anything that answers like it (a test double, a fetch with a proxy agent).
 * It must honour `redirect: 'manual'`: a fetch that follows redirects itself sends the apiKey on.
 */
export type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal; redirect: 'manual' }) => Promise<FetchResponse>;

export interface TransportOptions {
  /** Where the service is, e.g. `https://bridge.example.com` (a trailing slash is ignored). The apiKey goes to its origin only. */
  baseUrl: string;
  /** An API key issued with `keys create` (`cbk_…`); checked when the client is made. */
  apiKey: string;
  fetch?: Fetch;
  /** The longest one call may take, retries and their waits included (default 30 000). */
  timeoutMs?: number;
  /** How many times one call is sent at most (default 3, at most 10; 1 turns retries off). */
  maxAttempts?: number;
  /** The largest answer body read, in bytes (default 4 MiB, from 1 KiB to 1 GiB): past it the call throws AnswerTooLargeError. */
  maxAnswerBytes?: number;
}

export interface Answer {
  status: number;
  /** The parsed JSON body, undefined when it was not JSON. */
  body: unknown;
  /** The answer's X-Request-Id when it has a well-formed one, else the one the call sent (if any). */
  requestId: string | undefined;
  /** Its Retry-After, in seconds (else its `data.retryAfterSeconds`). */
  retryAfterSeconds: number | undefined;
}

export interface RequestInput {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  idempotencyKey?: string;
}

export type Send = (input: RequestInput) => Promise<Answer>;

/** What the service takes as X-Request-Id; anything else in an answer is not kept. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Throws a TypeError for options no call could succeed with (see settings.ts). */
export function createTransport(options: TransportOptions): Send {
  const settings = readSettings(options);
  const redact = createRedactor(settings.apiKey);

  return async function send(input) {
    const url = settings.base + input.path + queryString(input.query);
    const requestId = crypto.randomUUID();
    const headers: Record<string, string> = { apiKey: settings.apiKey, Accept: 'application/json', 'X-Request-Id': requestId };
    if (input.body !== undefined) headers['Content-Type'] = 'application/json';
    if (input.idempotencyKey !== undefined) headers['Idempotency-Key'] = input.idempotencyKey;
    const body = input.body === undefined ? undefined : jsonOf(input.body);
    const endsAt = Date.now() + settings.timeoutMs;
    const deadline = AbortSignal.timeout(settings.timeoutMs);
    const context: Context = { requestId, idempotencyKey: input.idempotencyKey };
    const timedOut = (cause: unknown) => noAnswer('timeout', `No answer within ${settings.timeoutMs} ms`, undefined, cause, redact, context);

    for (let attempt = 1; ; attempt++) {
      let answer: Answer | undefined;
      let redirected: FetchResponse | undefined;
      let failure: unknown;
      try {
        const response = await settings.fetch(url, { method: input.method, headers, ...(body !== undefined && { body }), signal: deadline, redirect: 'manual' });
        if (isRedirect(response)) redirected = response;
        else answer = cleaned(await readAnswer(response, requestId, { maxBytes: settings.maxAnswerBytes, signal: deadline }), redact);
      } catch (error) {
        // Sending again would bring the same answer.
        if (error instanceof AnswerTooLargeError) {
          const { message, status, requestId: answeredId, maxAnswerBytes } = error;
          throw new AnswerTooLargeError(message, { status, requestId: answeredId, maxAnswerBytes, idempotencyKey: input.idempotencyKey });
        }
        if (deadline.aborted) throw timedOut(error);
        failure = error;
      }
      if (redirected) throw redirectError(redirected, { requestUrl: url, origin: settings.origin, redact, ...context });
      const delay = answer ? retryDelay({ status: answer.status, reason: reasonOf(answer.body), retryAfterSeconds: answer.retryAfterSeconds }, attempt) : backoff(attempt);
      // A wait that would end past the deadline is not begun: what this attempt got stands.
      if (delay === undefined || attempt >= settings.maxAttempts || Date.now() + delay >= endsAt) {
        if (answer) return answer;
        throw noAnswer('connection_failed', 'Network error', describe(failure), failure, redact, context);
      }
      await sleep(delay, deadline);
      if (deadline.aborted) {
        if (answer) return answer;
        throw timedOut(failure);
      }
    }
  };
}

interface Context {
  requestId: string;
  idempotencyKey: string | undefined;
}

/** The request body as JSON; a value JSON cannot carry (a BigInt, a cycle) fails before sending. */
function jsonOf(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (error) {
    throw new TypeError('body: cannot be sent as JSON', { cause: error });
  }
}

/** A call that got no answer. A failure that mentions the apiKey (a custom fetch's) is left out whole. */
function noAnswer(reason: 'connection_failed' | 'timeout', title: string, detail: string | undefined, cause: unknown, redact: Redactor, context: Context): ConnectionError {
  const init = { reason, requestId: context.requestId, idempotencyKey: context.idempotencyKey };
  if (redact.mentions(detail) || redact.mentions(cause)) return new ConnectionError(`${title} (its description mentions the apiKey and is left out)`, init);
  return new ConnectionError(detail === undefined ? title : `${title}: ${detail}`, { ...init, cause });
}

/** An answer that is not a success may be turned into an error: the apiKey is masked in it. */
function cleaned(answer: Answer, redact: Redactor): Answer {
  if (answer.status >= 200 && answer.status < 300) return answer;
  return { ...answer, body: redact.json(answer.body), requestId: answer.requestId === undefined ? undefined : redact.text(answer.requestId) };
}

/** An error's message with its cause's (fetch says only "fetch failed"; the cause says why). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}

function queryString(query: RequestInput['query']): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** How much of an answer is read, and until when. */
export interface ReadLimits {
  /** Bytes of body read at most; past them AnswerTooLargeError. */
  maxBytes: number;
  /** Reading stops when it aborts (the call's deadline); the read rejects with its reason. */
  signal?: AbortSignal;
}

/** A response as an Answer (its body undefined when not JSON); `sentRequestId` stands when it carries no X-Request-Id. */
export async function readAnswer(response: FetchResponse, sentRequestId: string | undefined, limits: ReadLimits = { maxBytes: DEFAULT_MAX_ANSWER_BYTES }): Promise<Answer> {
  const answered = response.headers.get('x-request-id');
  const requestId = answered !== null && REQUEST_ID.test(answered) ? answered : sentRequestId;
  const text = await readBody(
    response,
    limits,
    () =>
      new AnswerTooLargeError(`The answer (HTTP ${response.status}) is larger than maxAnswerBytes (${limits.maxBytes}); it was not read`, {
        status: response.status,
        requestId,
        maxAnswerBytes: limits.maxBytes,
      }),
  );
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const data = isObject(body) && isObject(body.data) ? body.data : {};
  const dataSeconds = typeof data.retryAfterSeconds === 'number' && Number.isInteger(data.retryAfterSeconds) && data.retryAfterSeconds >= 0 ? data.retryAfterSeconds : undefined;
  return {
    status: response.status,
    body,
    requestId,
    retryAfterSeconds: retryAfterSecondsOf(response.headers.get('retry-after')) ?? dataSeconds,
  };
}

/**
 * The body as text, read until it ends, passes `maxBytes` (a Content-Length past it is refused
 * before reading) or the signal aborts; what was read stays in memory only that long.
 */
async function readBody(response: FetchResponse, { maxBytes, signal }: ReadLimits, tooLarge: () => AnswerTooLargeError): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const reader = response.body?.getReader?.();
  if (!reader) {
    // A fetch without a stream (a test double): bounded once read.
    const text = await untilAborted(response.text(), signal);
    if (new TextEncoder().encode(text).byteLength > maxBytes) throw tooLarge();
    return text;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await untilAborted(reader.read(), signal);
      if (done) break;
      if (!value) continue;
      size += value.byteLength;
      if (size > maxBytes) throw tooLarge();
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => undefined);
    throw error;
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(whole);
}

/** The promise, or a rejection as soon as the signal aborts (a body that drips stops there). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}

/** Resolves after `ms`, or as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The service's answer as a value, or a BridgeError for anything but a 2xx JSON object. */
export function expectSuccess<T>(answer: Answer, idempotencyKey?: string): T {
  if (answer.status >= 200 && answer.status < 300 && isObject(answer.body)) return answer.body as T;
  throw errorFrom(answer, idempotencyKey);
}

/** The answer's `data.reason`, when it is an error body with one. */
function reasonOf(body: unknown): string | undefined {
  const data = isObject(body) ? body.data : undefined;
  return isObject(data) && typeof data.reason === 'string' ? data.reason : undefined;
}

const PLATFORM_REASONS: ReadonlySet<string> = new Set(['platform_rejected', 'platform_failed', 'platform_timeout']);

/** The service's `{code, message, data}` error as the class its status and reason call for, or what can be said of an answer that is not one. */
export function errorFrom(answer: Answer, idempotencyKey?: string): BridgeError {
  const body = isObject(answer.body) ? answer.body : {};
  const { status } = answer;
  const message = typeof body.message === 'string' ? body.message : status < 300 ? `Unexpected answer (HTTP ${status}, not a JSON object)` : `HTTP ${status}`;
  const data: BridgeErrorData = isObject(body.data) ? body.data : {};
  // The service's list is closed and the types are made from it; a newer service's reason still passes through.
  const reason = reasonOf(answer.body) as BridgeErrorReason | undefined;
  const init: BridgeErrorInit = { status, reason, requestId: answer.requestId, data, idempotencyKey };
  if (reason === 'outcome_unknown' && (status === 502 || status === 504) && typeof data.operationId === 'string') {
    return new OutcomeUnknownError(message, { ...init, operationId: data.operationId, operationStatus: data.status === 'pending' ? 'pending' : 'unknown' });
  }
  if (reason !== undefined && PLATFORM_REASONS.has(reason)) {
    return new PlatformError(message, { ...init, platformMessage: typeof data.platformMessage === 'string' ? data.platformMessage : undefined });
  }
  if (status === 400) return new ValidationError(message, { ...init, issues: issuesOf(data.issues) });
  if (status === 401) return new AuthError(message, init);
  if (status === 403) return new PermissionError(message, init);
  if (status === 429) return new RateLimitError(message, { ...init, retryAfterSeconds: answer.retryAfterSeconds });
  return new BridgeError(message, init);
}

function issuesOf(value: unknown): Array<{ field: string; message: string }> {
  if (!Array.isArray(value)) return [];
  return value.filter((issue): issue is { field: string; message: string } => isObject(issue) && typeof issue.field === 'string' && typeof issue.message === 'string');
}
