// The admin client's options, checked when it is made: a value no call could succeed with fails
// there, once, instead of on every call (and being retried as if the network had failed).
import { checkApiKey } from './apiKey.js';
import type { Fetch, TransportOptions } from './transport.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_ATTEMPTS = 3;
/** The largest answer body read (4 MiB): the service's largest, a page of 500 audit entries, is far below. */
export const DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** An answer is held in memory whole: at most this bound can be asked for (1 GiB). */
const MAX_ANSWER_BYTES = 1024 * 1024 * 1024;
/** Timers take at most a signed 32-bit count of milliseconds (a longer one fires at once). */
const MAX_TIMEOUT_MS = 2_147_483_647;
const MAX_ATTEMPTS = 10;

export interface Settings {
  /** baseUrl without its trailing slashes: paths are appended to it. */
  base: string;
  /** The one origin the apiKey is sent to. */
  origin: string;
  apiKey: string;
  fetch: Fetch;
  timeoutMs: number;
  maxAttempts: number;
  maxAnswerBytes: number;
}

export function readSettings(options: TransportOptions): Settings {
  const { base, origin } = baseOf(options.baseUrl);
  return {
    base,
    origin,
    apiKey: checkApiKey(options.apiKey),
    // Looked up at each call, so that a fetch installed later is used.
    fetch: options.fetch ?? ((url, init) => globalThis.fetch(url, init)),
    timeoutMs: wholeNumber('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS),
    maxAttempts: wholeNumber('maxAttempts', options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, 1, MAX_ATTEMPTS),
    maxAnswerBytes: wholeNumber('maxAnswerBytes', options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES, 1024, MAX_ANSWER_BYTES),
  };
}

/** The value is not repeated in the error: a URL may carry a user name and password. */
function baseOf(value: unknown): { base: string; origin: string } {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new TypeError('baseUrl: must be an http: or https: URL with no user name, password, query or fragment, e.g. https://bridge.example.com');
  }
  return { base: (url.origin + url.pathname).replace(/\/+$/, ''), origin: url.origin };
}

function wholeNumber(name: string, value: unknown, min: number, max: number): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  throw new TypeError(`${name}: must be a whole number from ${min} to ${max}`);
}
