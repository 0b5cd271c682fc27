// One admin API call: JSON in and out, the apiKey header, one deadline over every attempt, and
// retries of the failures that leave the request's fate open (no answer, 502, 504) with the same
// Idempotency-Key, which the service answers from its record instead of acting twice.
import { BridgeError, type BridgeErrorData } from './errors.js';

/** The part of a fetch Response the client reads. */
export interface FetchResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** `globalThis.fetch`, or anything that answers like it (a test double, a fetch with a proxy agent). */
export type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal }) => Promise<FetchResponse>;

export interface TransportOptions {
  /** Where the service is, e.g. `https://bridge.example.com` (a trailing slash is ignored). */
  baseUrl: string;
  /** An API key issued with `keys create` (`cbk_…`). */
  apiKey: string;
  fetch?: Fetch;
  /** The longest one call may take, retries included (default 30 000). */
  timeoutMs?: number;
  /** How many times one call is sent at most (default 3; 1 turns retries off). */
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

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_ATTEMPTS = 3;
const FIRST_BACKOFF_MS = 250;
/** A Retry-After longer than this is not waited for: the answer is returned as it is. */
const MAX_RETRY_AFTER_MS = 5_000;

export type Send = (input: RequestInput) => Promise<Answer>;

export function createTransport(options: TransportOptions): Send {
  const base = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl: Fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);

  return async function send(input) {
    const url = base + input.path + queryString(input.query);
    const headers: Record<string, string> = { apiKey: options.apiKey, Accept: 'application/json' };
    if (input.body !== undefined) headers['Content-Type'] = 'application/json';
    if (input.idempotencyKey !== undefined) headers['Idempotency-Key'] = input.idempotencyKey;
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    const deadline = AbortSignal.timeout(timeoutMs);
    const keyOption = input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {};
    const timedOut = (cause: unknown) => new BridgeError(0, `No answer within ${timeoutMs} ms`, {}, { ...keyOption, cause });

    for (let attempt = 1; ; attempt++) {
      let answer: (Answer & { retryAfterMs: number | undefined }) | undefined;
      let failure: unknown;
      try {
        const response = await fetchImpl(url, { method: input.method, headers, ...(body !== undefined && { body }), signal: deadline });
        answer = { ...(await readAnswer(response)), retryAfterMs: retryAfterMs(response.headers.get('retry-after')) };
      } catch (error) {
        if (deadline.aborted) throw timedOut(error);
        failure = error;
      }
      const delay = answer ? retryDelay(answer, attempt) : backoff(attempt);
      if (delay === undefined || attempt >= maxAttempts) {
        if (answer) return answer;
        throw new BridgeError(0, `Network error: ${describe(failure)}`, {}, { ...keyOption, cause: failure });
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

/** An error's message with its cause's (fetch says only "fetch failed"; the cause says why). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}

/**
 * How long to wait before sending again, or undefined when the answer stands. 502 and 504 may
 * come from a proxy or from the platform; a 409 with Retry-After is the service saying an earlier
 * attempt with this key is still running.
 */
function retryDelay(answer: { status: number; retryAfterMs: number | undefined }, attempt: number): number | undefined {
  if (answer.status === 502 || answer.status === 504) return backoff(attempt);
  if (answer.status === 409 && answer.retryAfterMs !== undefined && answer.retryAfterMs <= MAX_RETRY_AFTER_MS) return answer.retryAfterMs;
  return undefined;
}

const backoff = (attempt: number) => FIRST_BACKOFF_MS * 2 ** (attempt - 1);

function retryAfterMs(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim()) * 1000;
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
