// The fishpi.cn adapter of the CommunityPlatform port (spec/community-platform.md).
//
// One axios instance with keep-alive agents carries every call. It accepts every HTTP status and
// the raw text of every answer, so this file alone decides what an answer means: callers only
// ever see the domain's platform errors, never an axios error, a stack, or a gold-finger key.
import axios, { type AxiosInstance } from 'axios';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { PlatformRejectedError, PlatformTimeoutError, PlatformUnavailableError } from '../domain/errors.js';
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
/** Failures that prove the request never left this host, so a write surely did not happen. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const TIMED_OUT = new Set(['ECONNABORTED', 'ETIMEDOUT']);

const isObject = (value: unknown): value is Answer => typeof value === 'object' && value !== null && !Array.isArray(value);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class FishpiPlatform implements CommunityPlatform {
  readonly openIdEndpoint: string;
  readonly identityPattern: RegExp;
  private readonly baseUrl: string;
  private readonly keys: GoldFingerKeys;
  private readonly timeoutMs: number;
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });
  private readonly http: AxiosInstance;

  constructor(options: FishpiPlatformOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.keys = options.keys;
    this.timeoutMs = options.timeoutMs;
    this.openIdEndpoint = `${this.baseUrl}/openid`;
    this.identityPattern = new RegExp(`^${escapeRegExp(this.baseUrl)}/openid/id/(\\d+)$`);
    this.http = axios.create({
      baseURL: this.baseUrl,
      timeout: options.timeoutMs,
      headers: { 'User-Agent': options.userAgent, Accept: 'application/json, text/plain' },
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      validateStatus: () => true,
      // Raw text: axios would otherwise hand back a string for a JSON body it failed to parse.
      responseType: 'text',
      transformResponse: (data: unknown) => data,
      maxContentLength: MAX_ANSWER_BYTES,
      // The platform never redirects an API call; a redirect is a login page or a proxy error.
      maxRedirects: 0,
    });
  }

  /** Drops the pooled keep-alive sockets (at shutdown, or at the end of a test). */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  async getUser(oId: string): Promise<PlatformUser | null> {
    const path = '/api/user/getInfoById';
    const answer = await this.json('GET', path, { params: { userId: oId } });
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
    const sourceFields = source
      ? { sourceAppId: source.appId, sourceAppName: source.appName, sourceScene: source.scene, requestId: source.requestId }
      : {};
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

  private async json(method: 'GET' | 'POST', path: string, request: { params?: Answer; data?: Answer }): Promise<Answer> {
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
  private async text(method: 'GET' | 'POST', path: string, request: { params?: Answer; data?: Answer }): Promise<string> {
    // axios' `timeout` is an idle timer on the socket; this is the wall-clock deadline of the call.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.timeoutMs);
    let response;
    try {
      response = await this.http.request<string>({
        method,
        url: path,
        ...request,
        headers: request.data ? { 'Content-Type': 'application/json' } : {},
        signal: deadline.signal,
      });
    } catch (error) {
      throw this.classify(error, path);
    } finally {
      clearTimeout(timer);
    }
    if (response.status < 200 || response.status >= 300) {
      throw new PlatformUnavailableError(`HTTP ${response.status} from ${path}`, true);
    }
    return typeof response.data === 'string' ? response.data : '';
  }

  private classify(error: unknown, path: string): PlatformTimeoutError | PlatformUnavailableError {
    // Only the deadline above cancels a call.
    if (axios.isCancel(error)) return new PlatformTimeoutError(this.timeoutMs);
    const code = axios.isAxiosError(error) ? error.code ?? '' : '';
    if (TIMED_OUT.has(code)) return new PlatformTimeoutError(this.timeoutMs);
    if (NOT_SENT.has(code)) return new PlatformUnavailableError(`cannot reach the platform (${code}) for ${path}`, false);
    // A reset, a hang-up or anything unknown: the request may have been received.
    return new PlatformUnavailableError(`the connection failed${code ? ` (${code})` : ''} during ${path}`, true);
  }
}

function unexpected(path: string): PlatformUnavailableError {
  return new PlatformUnavailableError(`unexpected answer from ${path}`, true);
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
