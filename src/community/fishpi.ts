// The fishpi.cn adapter of the CommunityPlatform port (docs/architecture.md, "The community platform").
//
// One undici Pool (keep-alive sockets to the platform's origin) carries every call; undici rather
// than axios because every admin request makes one platform call and axios' per-call CPU cost
// would dominate ours (docs/decisions.md). This file alone decides what an answer means: callers only
// ever see the domain's platform errors, never an undici error, a stack, or a gold-finger key.
import { Pool } from 'undici';
import { PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../domain/errors.js';
import { callWithin, DeadlineExpired, type PlatformAnswer } from './platformCall.js';
import { missingKeyError, type GoldFingerKeys, type GoldFingerType } from './goldFinger.js';
import type { CommunityPlatform, ItemBag, OpenIdRequest, PlatformUser, PointsSource } from './port.js';

export type { GoldFingerType } from './goldFinger.js';

export interface FishpiPlatformOptions {
  baseUrl: string;
  keys: GoldFingerKeys;
  timeoutMs: number;
  userAgent: string;
}

type Answer = Record<string, unknown>;

const OPENID_NS = 'http://specs.openid.net/auth/2.0';
const IDENTIFIER_SELECT = 'http://specs.openid.net/auth/2.0/identifier_select';
/** Every legitimate answer is tiny; a huge one is a misbehaving server, not data to buffer. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/**
 * Failures that prove the request never left this host, so a write surely did not happen: each
 * comes only from establishing a connection (undici's own connect timeout included), before a
 * byte of the request is written.
 */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);
/** undici's idle timers on a written request: the platform may be working on it. */
const TIMED_OUT = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const isObject = (value: unknown): value is Answer => typeof value === 'object' && value !== null && !Array.isArray(value);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class FishpiPlatform implements CommunityPlatform {
  readonly openIdEndpoint: string;
  readonly identityPattern: RegExp;
  private readonly baseUrl: string;
  private readonly keys: GoldFingerKeys;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;
  /** The base URL's path, which every call's path follows (empty for a bare origin). */
  private readonly pathPrefix: string;
  private readonly pool: Pool;

  constructor(options: FishpiPlatformOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.keys = options.keys;
    this.timeoutMs = options.timeoutMs;
    this.openIdEndpoint = `${this.baseUrl}/openid`;
    this.identityPattern = new RegExp(`^${escapeRegExp(this.baseUrl)}/openid/id/(\\d+)$`);
    this.headers = { 'user-agent': options.userAgent, accept: 'application/json, text/plain' };
    const base = new URL(this.baseUrl);
    this.pathPrefix = base.pathname.replace(/\/+$/, '');
    // Keep-alive is undici's default. A Pool's request() never follows a redirect: the platform
    // never redirects an API call, so a 3xx (a login page, a proxy error) is a non-2xx failure.
    // Past MAX_ANSWER_BYTES undici destroys the socket and fails the body.
    this.pool = new Pool(base.origin, { maxResponseSize: MAX_ANSWER_BYTES });
  }

  /**
   * Drops the pooled keep-alive sockets (at shutdown, or at the end of a test); resolves once they
   * are closed. The port's callers may ignore the promise.
   */
  close(): Promise<void> {
    return this.pool.destroy();
  }

  async getUser(oId: string): Promise<PlatformUser | null> {
    const path = '/api/user/getInfoById';
    const answer = await this.json('GET', path, { query: { userId: oId } });
    if (answer.code === -1) return null;
    const data = answer.data;
    if (answer.code !== 0 || !isObject(data) || typeof data.userName !== 'string') throw unexpected(path);
    return {
      oId,
      userName: data.userName,
      nickname: typeof data.userNickname === 'string' ? data.userNickname : '',
      avatar: typeof data.userAvatarURL === 'string' ? data.userAvatarURL : '',
    };
  }

  editPoints(input: { userName: string; point: number; memo: string; source?: PointsSource }): Promise<string> {
    const { userName, point, memo, source } = input;
    // The source fields are all-or-none on the platform: send all four or none.
    const sourceFields = source ? { sourceAppId: source.appId, sourceAppName: source.appName, sourceScene: source.scene, requestId: source.requestId } : {};
    return this.goldFinger('point', '/user/edit/points', { userName, point, memo, ...sourceFields }, message);
  }

  giveMedal(input: { userName: string; name: string; description: string; attr: string; data: string }): Promise<string> {
    return this.goldFinger('metal', '/user/edit/give-metal', { ...input }, message);
  }

  removeMedal(input: { userName: string; name: string }): Promise<string> {
    return this.goldFinger('metal', '/user/edit/remove-metal', { ...input }, message);
  }

  queryItems(userName: string): Promise<ItemBag> {
    return this.goldFinger('item', '/user/query/items', { userName }, bag);
  }

  editItems(input: { userName: string; item: string; sum: number }): Promise<{ message: string; bag: ItemBag }> {
    return this.goldFinger('item', '/user/edit/items', { ...input }, (answer) => {
      const [text, after] = [message(answer), bag(answer)];
      return text === undefined || after === undefined ? undefined : { message: text, bag: after };
    });
  }

  liveness(userName: string): Promise<number> {
    // The one success without a `code`: `{"liveness":80.2}`.
    return this.goldFinger('liveness', '/user/liveness', { userName }, (answer) =>
      typeof answer.liveness === 'number' && (answer.code === undefined || answer.code === 0) ? answer.liveness : undefined,
    );
  }

  openIdLoginUrl({ returnTo, realm }: OpenIdRequest): string {
    const query = new URLSearchParams({
      'openid.ns': OPENID_NS,
      'openid.mode': 'checkid_setup',
      'openid.return_to': returnTo,
      'openid.realm': realm,
      'openid.identity': IDENTIFIER_SELECT,
      'openid.claimed_id': IDENTIFIER_SELECT,
    });
    return `${this.baseUrl}/openid/login?${query}`;
  }

  async verifyAssertion(params: Record<string, string>): Promise<boolean> {
    const openIdParams = Object.fromEntries(Object.entries(params).filter(([key]) => key.startsWith('openid.')));
    const text = await this.text('POST', '/openid/verify', {
      data: { ...openIdParams, 'openid.mode': 'check_authentication' },
    });
    // `key:value` lines; newer builds add scope, access_token, … which we do not need.
    const verdict = text
      .split(/\r?\n/)
      .map((line) => /^\s*is_valid\s*:\s*(\S*)\s*$/.exec(line)?.[1])
      .find((value) => value !== undefined);
    if (verdict === undefined) throw unexpected('/openid/verify');
    return verdict === 'true';
  }

  /**
   * An admin call: the type's key goes into the body, a `code:-1` becomes a rejection, and `read`
   * takes what the caller needs from any other answer (undefined: not an answer we understand).
   */
  private async goldFinger<T>(type: GoldFingerType, path: string, body: Answer, read: (answer: Answer) => T | undefined): Promise<T> {
    const key = this.keys[type];
    if (!key) throw missingKeyError(type);
    const answer = await this.json('POST', path, { data: { ...body, goldFingerKey: key } });
    if (answer.code === -1) throw new PlatformRejectedError(typeof answer.msg === 'string' ? answer.msg : 'no message');
    const result = read(answer);
    if (result === undefined) throw unexpected(path);
    return result;
  }

  private async json(method: 'GET' | 'POST', path: string, request: CallBody): Promise<Answer> {
    const text = await this.text(method, path, request);
    try {
      const answer: unknown = JSON.parse(text);
      if (isObject(answer)) return answer;
    } catch {
      // falls through: an HTML error page or a truncated body is the same failure as a non-object
    }
    throw unexpected(path);
  }

  /** Sends one request; resolves with the body of a 2xx answer and classifies everything else. */
  private async text(method: 'GET' | 'POST', path: string, request: CallBody): Promise<string> {
    const headers = request.data ? { ...this.headers, 'content-type': 'application/json' } : this.headers;
    const query = request.query ? queryString(request.query) : '';
    let answer: PlatformAnswer;
    try {
      // The wall-clock deadline of the whole call, body included (undici's own timers are idle
      // timers that a trickling answer keeps resetting).
      answer = await callWithin(
        this.pool,
        { method, path: `${this.pathPrefix}${path}${query}`, headers, body: request.data ? JSON.stringify(request.data) : undefined },
        this.timeoutMs,
      );
    } catch (error) {
      throw this.classify(error, path);
    }
    if (answer.statusCode < 200 || answer.statusCode >= 300) throw new PlatformUnavailableError(`HTTP ${answer.statusCode} from ${path}`, true);
    return answer.text;
  }

  private classify(error: unknown, path: string): PlatformTimeoutError | PlatformUnavailableError {
    if (error instanceof DeadlineExpired) return new PlatformTimeoutError(this.timeoutMs);
    const code = codeOf(error);
    if (TIMED_OUT.has(code)) return new PlatformTimeoutError(this.timeoutMs);
    if (NOT_SENT.has(code)) return new PlatformUnavailableError(`cannot reach the platform (${code}) for ${path}`, false);
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return unexpected(path);
    // A reset, a hang-up (UND_ERR_SOCKET), a destroyed pool or anything unknown: the request may
    // have been received.
    return new PlatformUnavailableError(`the connection failed${code ? ` (${code})` : ''} during ${path}`, true);
  }
}

interface CallBody {
  /** Query parameters (GET). */
  query?: Record<string, string>;
  /** A JSON body (POST). */
  data?: Answer;
}

/**
 * The code of an undici or socket error. Connect errors arrive as they are (`code` on the error,
 * an AggregateError carrying its first attempt's code when several addresses were tried), or
 * wrapped with the system error as `cause`.
 */
function codeOf(error: unknown): string {
  if (!isObject(error)) return '';
  if (typeof error.code === 'string') return error.code;
  const cause = error.cause;
  return isObject(cause) && typeof cause.code === 'string' ? cause.code : '';
}

function unexpected(path: string): PlatformUnavailableError {
  return new PlatformUnavailableError(`unexpected answer from ${path}`, true);
}

/** What a form-encoded query leaves as it is (URLSearchParams encodes every other character). */
const FORM_SAFE = /^[A-Za-z0-9*._-]*$/;

/**
 * `?name=value&…`, form-encoded as URLSearchParams would: its own work only for what needs
 * encoding (an oId never does), where it would otherwise cost more than the rest of the call's building.
 */
function queryString(query: Record<string, string>): string {
  let text = '';
  for (const [name, value] of Object.entries(query)) {
    if (!FORM_SAFE.test(name) || !FORM_SAFE.test(value)) return `?${new URLSearchParams(query)}`;
    text += `${text ? '&' : '?'}${name}=${value}`;
  }
  return text;
}

/** The message of a `code:0` answer (some successes carry none). */
function message(answer: Answer): string | undefined {
  if (answer.code !== 0) return undefined;
  return typeof answer.msg === 'string' ? answer.msg : '';
}

/** The item bag in `data` of a `code:0` answer. */
function bag(answer: Answer): ItemBag | undefined {
  const data = answer.data;
  if (answer.code !== 0 || !isObject(data)) return undefined;
  return Object.values(data).every((count) => typeof count === 'number') ? (data as ItemBag) : undefined;
}
