// One admin API call: JSON in and out, the apiKey header, one deadline over every attempt, and
// retries (retry.ts) of the failures that leave the request's fate open, with the same
// Idempotency-Key, which the service answers from its record instead of acting twice. The key is
// sent to baseUrl's origin only (redirects are not followed) and kept out of every error.
import { BridgeError, type BridgeErrorData } from './errors.js';
import { createRedactor, type Redactor } from './redact.js';
import { isRedirect, redirectError } from './redirect.js';
import { backoff, retryDelay } from './retry.js';
import { readSettings } from './settings.js';

/** The part of a fetch Response the client reads. */
export interface FetchResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  /** `'opaqueredirect'` is how a browser answers a redirect it was told not to follow. */
  readonly type?: string;
  /** Cancelled when the answer is not read (a redirect). */
  readonly body?: { cancel(): Promise<void> } | null;
}

/**
 * `globalThis.fetch`, or anything that answers like it (a test double, a fetch with a proxy agent).
 * It must honour `redirect: 'manual'`: a fetch that follows redirects itself sends the apiKey on.
 */
export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal; redirect: 'manual' },
) => Promise<FetchResponse>;

export interface TransportOptions {
  /** Where the service is, e.g. `https://bridge.example.com` (a trailing slash is ignored). The apiKey goes to its origin only. */
  baseUrl: string;
  /** An API key issued with `keys create` (`cbk_…`); checked when the client is made. */
  apiKey: string;
  fetch?: Fetch;
  /** The longest one call may take, retries included (default 30 000). */
  timeoutMs?: number;
  /** How many times one call is sent at most (default 3, at most 10; 1 turns retries off). */
  maxAttempts?: number;
}

export interface Answer {
  status: number;
  /** The parsed JSON body, undefined when it was not JSON. */
  body: unknown;
}

export interface RequestInput {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  idempotencyKey?: string;
}

export type Send = (input: RequestInput) => Promise<Answer>;

/** Throws a TypeError for options no call could succeed with (see settings.ts). */
export function createTransport(options: TransportOptions): Send {
  const settings = readSettings(options);
  const redact = createRedactor(settings.apiKey);

  return async function send(input) {
    const url = settings.base + input.path + queryString(input.query);
    const headers: Record<string, string> = { apiKey: settings.apiKey, Accept: 'application/json' };
    if (input.body !== undefined) headers['Content-Type'] = 'application/json';
    if (input.idempotencyKey !== undefined) headers['Idempotency-Key'] = input.idempotencyKey;
    const body = input.body === undefined ? undefined : jsonOf(input.body);
    const deadline = AbortSignal.timeout(settings.timeoutMs);
    const keyOption = input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {};
    const timedOut = (cause: unknown) => noAnswer(`No answer within ${settings.timeoutMs} ms`, undefined, cause, redact, keyOption);

    for (let attempt = 1; ; attempt++) {
      let answer: Answer | undefined;
      let retryAfter: string | null = null;
      let redirected: FetchResponse | undefined;
      let failure: unknown;
      try {
        const response = await settings.fetch(url, { method: input.method, headers, ...(body !== undefined && { body }), signal: deadline, redirect: 'manual' });
        if (isRedirect(response)) redirected = response;
        else {
          answer = cleaned(await readAnswer(response), redact);
          retryAfter = response.headers.get('retry-after');
        }
      } catch (error) {
        if (deadline.aborted) throw timedOut(error);
        failure = error;
      }
      if (redirected) throw redirectError(redirected, { requestUrl: url, origin: settings.origin, redact, idempotencyKey: input.idempotencyKey });
      const delay = answer ? retryDelay(answer.status, retryAfter, attempt) : backoff(attempt);
      if (delay === undefined || attempt >= settings.maxAttempts) {
        if (answer) return answer;
        throw noAnswer('Network error', describe(failure), failure, redact, keyOption);
      }
      await sleep(delay, deadline);
      if (deadline.aborted) {
        // The deadline cut the retries short: the last answer stands.
        if (answer) return answer;
        throw timedOut(failure);
      }
    }
  };
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
function noAnswer(title: string, detail: string | undefined, cause: unknown, redact: Redactor, keyOption: { idempotencyKey?: string }): BridgeError {
  if (redact.mentions(detail) || redact.mentions(cause)) return new BridgeError(0, `${title} (its description mentions the apiKey and is left out)`, {}, keyOption);
  return new BridgeError(0, detail === undefined ? title : `${title}: ${detail}`, {}, { ...keyOption, cause });
}

/** An answer that is not a success may be turned into an error: the apiKey is masked in it. */
function cleaned(answer: Answer, redact: Redactor): Answer {
  return answer.status >= 200 && answer.status < 300 ? answer : { status: answer.status, body: redact.json(answer.body) };
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

/** Status and JSON body of a response (undefined for a body that is not JSON). */
export async function readAnswer(response: FetchResponse): Promise<Answer> {
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: undefined };
  }
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

/** The service's `{code, message, data}` error, or what can be said of an answer that is not one. */
export function errorFrom(answer: Answer, idempotencyKey?: string): BridgeError {
  const body = isObject(answer.body) ? answer.body : {};
  const message = typeof body.message === 'string' ? body.message : answer.status < 300 ? `Unexpected answer (HTTP ${answer.status}, not a JSON object)` : `HTTP ${answer.status}`;
  const data = isObject(body.data) ? (body.data as BridgeErrorData) : {};
  return new BridgeError(answer.status, message, data, idempotencyKey === undefined ? {} : { idempotencyKey });
}
