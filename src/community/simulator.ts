// An in-memory stand-in for the fishpi.cn platform, built from the platform's documented behaviour (docs/architecture.md, "The community platform"), for
// tests, benchmarks and `npm run dev`. It answers like the platform does, quirks included (a
// medal for an unknown user is an HTTP 500, an item deduction below zero "succeeds" unchanged,
// liveness has no `code`), so the adapter and the service meet those quirks before production.
// It also plays the platform's OpenID 2.0 provider, with a consent page for people and a
// `sim_user` shortcut for automation.
//
// `state` is the tests' handle: seed and change users, read what the platform now holds, and
// provoke failures (delays, HTTP 500, garbage answers, and per path: writes that take effect
// while their answer is late, never comes or is cut off). With `faultControl` the same failures
// can be queued over HTTP at `/_faults`, for a person trying the service by hand (`npm run dev`).
import Router, { type RouterMiddleware } from '@koa/router';
import Koa, { type Context } from 'koa';
import { koaBody } from 'koa-body';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import * as v from 'valibot';
import type { GoldFingerType } from './fishpi.js';
import { escapeHtml } from '../system/html.js';

/** The gold-finger key of every type unless `goldFingerKeys` says otherwise. */
export const SIMULATOR_KEY = 'sim-key';

export interface SimulatorUserSeed {
  oId: string;
  userName: string;
  nickname?: string;
  avatar?: string;
  points?: number;
  items?: Record<string, number>;
  liveness?: number;
}

export interface SimulatorMedal {
  name: string;
  description: string;
  attr: string;
  data: string;
  expireDate?: string;
}

export interface SimulatorPointsEntry {
  transactionId: string;
  point: number;
  memo: string;
  source?: { sourceAppId: string; sourceAppName: string; sourceScene: string; requestId: string };
}

/** What the platform holds about one user. `state.user()` hands out copies. */
export interface SimulatorUser {
  oId: string;
  userName: string;
  nickname: string;
  avatar: string;
  points: number;
  medals: SimulatorMedal[];
  items: Record<string, number>;
  liveness: number;
  /** Every accepted points change, oldest first. */
  ledger: SimulatorPointsEntry[];
}

export type SimulatorFailure = 'http500' | 'garbage';

/**
 * What happens to one request for a path. "Applied" means the platform did the work (the ledger,
 * medals and items changed) whatever the client then sees.
 */
export type SimulatorFault =
  /** Never answers and never applies: the connection stays open until the client gives up or the simulator closes. */
  | { kind: 'hang' }
  /** Waits `ms`, then applies and answers (a slow platform: nothing happened until it answers). */
  | { kind: 'delayThenApply'; ms: number }
  /** Applies at once and answers `ms` later (a client that gives up first leaves a change behind). */
  | { kind: 'applyThenDelay'; ms: number }
  /** Applies, then never answers: the connection stays open until the client gives up or the simulator closes. */
  | { kind: 'applyThenHang' }
  /** Applies, then resets the connection instead of answering. */
  | { kind: 'applyThenReset' };

/** One request that reached the platform's routes (after the User-Agent check and any failNext). */
export interface SimulatorArrival {
  path: string;
  /** The JSON body as received (empty for a GET). */
  body: Record<string, unknown>;
  /** Whether its whole answer has been handed to the connection (false while it waits, hangs, or was cut off). */
  answered: boolean;
}

export interface SimulatorState {
  /** Throws when the oId or the userName is already taken. */
  addUser(seed: SimulatorUserSeed): void;
  /** Renames (a new userName) or changes a profile; throws for an unknown oId or a taken name. */
  updateUser(oId: string, change: Partial<Omit<SimulatorUserSeed, 'oId'>>): void;
  /** A copy of the user as the platform holds it now, or undefined. */
  user(oId: string): SimulatorUser | undefined;
  /** Delays every answer by `ms` (0: none); a request still takes effect after its delay. */
  setDelay(ms: number): void;
  /** The next `n` requests (after the User-Agent check) fail this way without taking effect. */
  failNext(n: number, kind: SimulatorFailure): void;
  /** How many requests arrived for this path (e.g. '/user/edit/points'), refused ones included. */
  calls(path: string): number;
  /** The next `n` requests for exactly this path meet this fault (after any failNext). */
  faultNext(path: string, fault: SimulatorFault, n?: number): void;
  /** Requests for this path that reached the routes, oldest first, faulted ones included (of the last 10 000 of all paths). */
  arrivals(path: string): SimulatorArrival[];
  /** How many points changes with this memo the platform applied, over every user. */
  pointsApplied(memo: string): number;
  /** The bodies `/openid/verify` received, oldest first (what a relying party forwarded). */
  verifyRequests(): Record<string, unknown>[];
}

export interface SimulatorOptions {
  users?: SimulatorUserSeed[];
  goldFingerKeys?: Partial<Record<GoldFingerType, string>>;
  /** Base URL the simulator names itself by (op_endpoint, identities); default: where it listens. */
  publicUrl?: string;
  /** Clock in ms since the epoch, for nonce ages; default Date.now. */
  now?: () => number;
  /** Serve `/_faults` (queue, list and clear faults over HTTP, loopback clients only); default false. */
  faultControl?: boolean;
}

export interface RunningSimulator {
  url: string;
  /** Stops listening and destroys open (keep-alive) connections, so a test process can exit. */
  close(): Promise<void>;
}

export interface Simulator {
  app: Koa;
  state: SimulatorState;
  listen(port?: number, host?: string): Promise<RunningSimulator>;
}

type Body = Record<string, unknown>;

const OPENID_NS = 'http://specs.openid.net/auth/2.0';
const IDENTIFIER_SELECT = 'http://specs.openid.net/auth/2.0/identifier_select';
/** The fields the provider signs in the assertions it issues. */
const SIGNED_FIELDS = ['op_endpoint', 'claimed_id', 'identity', 'return_to', 'response_nonce', 'assoc_handle'];
const NONCE_LIFETIME_MS = 5 * 60_000;
const SOURCE_FIELDS = ['sourceAppId', 'sourceAppName', 'sourceScene', 'requestId'] as const;
const SOURCE_SCENES = ['payment', 'point_issue', 'refund', 'transfer'];
/** Arrivals kept for `state.arrivals`: enough for any test, bounded for benchmarks. */
const ARRIVALS_KEPT = 10_000;

/** A `{"code":-1,"msg":…}` answer. */
class Refusal extends Error {}
/** A plain HTTP 500, as the platform answers a medal change for an unknown user. */
class Crash extends Error {}

function refuse(message: string): never {
  throw new Refusal(message);
}

const isObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);
const isInt32 = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= -(2 ** 31) && (value as number) < 2 ** 31;

/** The platform accepts a return_to on https, or on plain http only for a local relying party. */
function acceptableReturnTo(url: unknown): boolean {
  if (typeof url !== 'string') return false;
  try {
    const { protocol, hostname } = new URL(url);
    return protocol === 'https:' || (protocol === 'http:' && (hostname === 'localhost' || hostname === '127.0.0.1'));
  } catch {
    return false;
  }
}

function returnToProblem(returnTo: unknown, realm: unknown): string | undefined {
  if (typeof returnTo !== 'string' || !returnTo || typeof realm !== 'string' || !realm) return 'return_to and realm are required';
  if (!acceptableReturnTo(returnTo)) return 'return_to must be https or on localhost/127.0.0.1';
  if (!returnTo.startsWith(realm)) return 'return_to must start with realm';
  return undefined;
}

/** return_to with extra query parameters, its own query kept. */
function withQuery(url: string, params: Record<string, string>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  return target.toString();
}

/** The source fields of a points change: none, or all four and well-formed. */
function pointsSource(body: Body): SimulatorPointsEntry['source'] {
  const present = SOURCE_FIELDS.filter((field) => body[field] !== undefined && body[field] !== null && body[field] !== '');
  if (present.length === 0) return undefined;
  if (present.length < SOURCE_FIELDS.length) refuse('来源字段必须同时提供：sourceAppId、sourceAppName、sourceScene、requestId');
  const { sourceAppId, sourceAppName, sourceScene, requestId } = body;
  if (typeof sourceAppId !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(sourceAppId)) refuse('sourceAppId 格式不正确');
  if (typeof sourceAppName !== 'string' || sourceAppName.length > 40) refuse('sourceAppName 不能超过 40 个字符');
  if (typeof sourceScene !== 'string' || !SOURCE_SCENES.includes(sourceScene)) refuse('sourceScene 不正确');
  if (typeof requestId !== 'string' || !/^[A-Za-z0-9_:.-]{1,128}$/.test(requestId)) refuse('requestId 格式不正确');
  return { sourceAppId, sourceAppName, sourceScene, requestId };
}

function respond(ctx: Context, status: number, type: string, body: string): void {
  ctx.status = status;
  ctx.type = type;
  ctx.body = body;
}

function page(title: string, content: string): string {
  return `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${content}</body></html>`;
}

const SERVER_ERROR_PAGE = page('500', '<h1>500 Internal Server Error</h1>');

/** What the routes share: the simulated platform's users, its keys, its clock and its name. */
interface Platform {
  users: Map<string, SimulatorUser>;
  keys: Partial<Record<GoldFingerType, string>>;
  now: () => number;
  /** The base URL it names itself by (op_endpoint, identities), without a trailing slash. */
  baseOf(ctx: Context): string;
}

const userNamed = (users: Map<string, SimulatorUser>, name: unknown) => [...users.values()].find((user) => user.userName === name);

export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const users = new Map<string, SimulatorUser>();
  const callCounts = new Map<string, number>();
  const failures: SimulatorFailure[] = [];
  const faults = new Map<string, SimulatorFault[]>();
  const arrived: SimulatorArrival[] = [];
  const verifyRequests: Body[] = [];
  let delayMs = 0;
  let listeningUrl: string | undefined;
  const platform: Platform = {
    users,
    keys: options.goldFingerKeys ?? { point: SIMULATOR_KEY, metal: SIMULATOR_KEY, item: SIMULATOR_KEY, liveness: SIMULATOR_KEY },
    now: options.now ?? Date.now,
    // Before listen() (the app mounted on someone else's server) the request tells where we are.
    baseOf: (ctx) => (options.publicUrl ?? listeningUrl ?? ctx.origin).replace(/\/+$/, ''),
  };

  const state: SimulatorState = {
    addUser(seed) {
      if (users.has(seed.oId)) throw new Error(`simulator: oId ${seed.oId} already exists`);
      if (userNamed(users, seed.userName)) throw new Error(`simulator: userName ${seed.userName} already exists`);
      users.set(seed.oId, {
        oId: seed.oId,
        userName: seed.userName,
        nickname: seed.nickname ?? seed.userName,
        avatar: seed.avatar ?? `https://file.fishpi.cn/default-avatar/${seed.oId}.png`,
        points: seed.points ?? 0,
        medals: [],
        items: { ...seed.items },
        liveness: seed.liveness ?? 0,
        ledger: [],
      });
    },
    updateUser(oId, change) {
      const user = users.get(oId);
      if (!user) throw new Error(`simulator: no user ${oId}`);
      const holder = change.userName === undefined ? undefined : userNamed(users, change.userName);
      if (holder && holder !== user) throw new Error(`simulator: userName ${change.userName} already exists`);
      Object.assign(user, change, change.items ? { items: { ...change.items } } : {});
    },
    user: (oId) => (users.has(oId) ? structuredClone(users.get(oId)) : undefined),
    setDelay(ms) {
      delayMs = ms;
    },
    failNext(n, kind) {
      failures.push(...Array<SimulatorFailure>(n).fill(kind));
    },
    calls: (path) => callCounts.get(path) ?? 0,
    faultNext(path, fault, n = 1) {
      faults.set(path, [...(faults.get(path) ?? []), ...Array<SimulatorFault>(n).fill(fault)]);
    },
    arrivals: (path) => arrived.filter((a) => a.path === path).map((a) => structuredClone(a)),
    pointsApplied: (memo) => [...users.values()].reduce((n, user) => n + user.ledger.filter((entry) => entry.memo === memo).length, 0),
    verifyRequests: () => structuredClone(verifyRequests),
  };
  for (const seed of options.users ?? []) state.addUser(seed);

  const router = new Router();
  adminRoutes(router, platform);
  openIdRoutes(router, platform, verifyRequests);

  const app = new Koa();
  if (options.faultControl) {
    // First: controlling faults is not a platform request, so it is neither counted, delayed nor failed.
    const control = faultControl({ faults, failures, knownPath: (path) => router.stack.some((layer) => layer.match(path)) });
    app.use((ctx, next) => (ctx.path === FAULT_CONTROL_PATH ? control(ctx) : next()));
  }
  app.use(async (ctx, next) => {
    callCounts.set(ctx.path, (callCounts.get(ctx.path) ?? 0) + 1);
    if (!ctx.get('User-Agent')) return respond(ctx, 418, 'text/plain', "I'm a teapot");
    // Unref'd: a test that closes the simulator mid-delay must still be able to exit.
    if (delayMs > 0) await sleep(delayMs, undefined, { ref: false });
    const failure = failures.shift();
    if (failure === 'http500') return respond(ctx, 500, 'html', SERVER_ERROR_PAGE);
    if (failure === 'garbage') return respond(ctx, 200, 'html', '<html><body>维护中 {"code":');
    await next();
  });
  // The platform only reads a body that is a JSON object; anything else reads as empty.
  app.use(koaBody({ multipart: false, text: false, onError: () => undefined }));
  app.use(async (ctx, next) => {
    const arrival: SimulatorArrival = { path: ctx.path, body: isObject(ctx.request.body) ? structuredClone(ctx.request.body) : {}, answered: false };
    arrived.push(arrival);
    ctx.res.once('finish', () => (arrival.answered = true));
    if (arrived.length > ARRIVALS_KEPT) arrived.shift();
    const fault = faults.get(ctx.path)?.shift();
    if (fault) await withFault(ctx, fault, next);
    else await next();
  });
  app.use(router.routes()).use(router.allowedMethods());

  return {
    app,
    state,
    async listen(port = 0, host = '127.0.0.1') {
      const server = createServer(app.callback());
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, resolve);
      });
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
      listeningUrl = url;
      return {
        url,
        close: () =>
          new Promise<void>((resolve, reject) => {
            server.close((error) => (error ? reject(error) : resolve()));
            server.closeAllConnections();
          }),
      };
    },
  };
}

export const FAULT_CONTROL_PATH = '/_faults';
/** Faults and failures queued at once, over every path: a forgotten script cannot grow them without end. */
export const FAULT_QUEUE_MAX = 10_000;
const FAULT_CONTROL_BODY_MAX_BYTES = 4096;

/** The control's names for the fault kinds (kebab-case, as typed on a command line). */
const FAULT_MODES = {
  hang: 'hang',
  'delay-then-apply': 'delayThenApply',
  'apply-then-delay': 'applyThenDelay',
  'apply-then-hang': 'applyThenHang',
  'apply-then-reset': 'applyThenReset',
} as const satisfies Record<string, SimulatorFault['kind']>;
type FaultMode = keyof typeof FAULT_MODES;
const modeOf = (kind: SimulatorFault['kind']) => (Object.keys(FAULT_MODES) as FaultMode[]).find((mode) => FAULT_MODES[mode] === kind)!;
const FAILURE_MODES = ['http500', 'garbage'] as const satisfies readonly SimulatorFailure[];
const ALL_MODES = [...Object.keys(FAULT_MODES), ...FAILURE_MODES].join(', ');

const Count = v.optional(
  v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(1000, 'must be at most 1000')),
  1,
);
const Ms = v.pipe(
  v.number('must be a number of milliseconds'),
  v.integer('must be a whole number'),
  v.minValue(0, 'must be 0 or more'),
  v.maxValue(600_000, 'must be at most 600000'),
);
const Path = v.pipe(v.string('must be a path such as /user/edit/points'), v.maxLength(200, 'must be at most 200 characters'), v.startsWith('/', 'must start with /'));
const unexpected = (what: string) => `is not taken ${what}`;

/**
 * One request of the control. A per-path fault names its path; http500 and garbage fail the next
 * requests of any path (the simulator's failNext), so a path there would mislead.
 */
const FaultRequest = v.variant(
  'mode',
  [
    v.strictObject({ mode: v.picklist(['hang', 'apply-then-hang', 'apply-then-reset']), path: Path, count: Count }, unexpected('by this mode')),
    v.strictObject({ mode: v.picklist(['delay-then-apply', 'apply-then-delay']), path: Path, ms: Ms, count: Count }, unexpected('by this mode')),
    v.strictObject({ mode: v.picklist(FAILURE_MODES), count: Count }, unexpected('by http500 and garbage: they fail the next requests of any path')),
  ],
  `must be one of ${ALL_MODES}`,
);

/** What is queued, in the order it will meet requests, runs of one fault on one path counted once. */
interface QueuedFault {
  path?: string;
  mode: string;
  ms?: number;
  count: number;
}

/** `GET` lists what is queued, `POST` queues, `DELETE` clears; for loopback clients only. */
function faultControl(queues: { faults: Map<string, SimulatorFault[]>; failures: SimulatorFailure[]; knownPath: (path: string) => boolean }) {
  const { faults, failures } = queues;
  const answer = (ctx: Context, status: number, body: unknown) => {
    ctx.status = status;
    ctx.body = body;
  };
  const problem = (ctx: Context, status: number, message: string) => answer(ctx, status, { code: status, message });
  const size = () => failures.length + [...faults.values()].reduce((n, queue) => n + queue.length, 0);
  const queued = () => {
    const list: QueuedFault[] = [];
    const add = (entry: Omit<QueuedFault, 'count'>) => {
      const last = list.at(-1);
      if (last && last.path === entry.path && last.mode === entry.mode && last.ms === entry.ms) last.count++;
      else list.push({ ...entry, count: 1 });
    };
    // failNext comes before any per-path fault, so it is listed first.
    for (const failure of failures) add({ mode: failure });
    for (const [path, queue] of faults) for (const fault of queue) add({ path, mode: modeOf(fault.kind), ...('ms' in fault && { ms: fault.ms }) });
    return { queued: list };
  };

  return async (ctx: Context) => {
    const peer = ctx.req.socket.remoteAddress ?? '';
    // The simulator may be bound to a wider address (SIM_HOST); its faults stay a local matter.
    if (!(peer.startsWith('127.') || peer === '::1' || peer.startsWith('::ffff:127.'))) {
      return problem(ctx, 403, `${FAULT_CONTROL_PATH} answers loopback clients only`);
    }
    if (ctx.method === 'GET') return answer(ctx, 200, queued());
    if (ctx.method === 'DELETE') {
      const cleared = size();
      faults.clear();
      failures.length = 0;
      return answer(ctx, 200, { cleared });
    }
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'GET, POST, DELETE');
      return problem(ctx, 405, `${FAULT_CONTROL_PATH} takes GET, POST and DELETE`);
    }
    const text = await readBody(ctx, FAULT_CONTROL_BODY_MAX_BYTES);
    if (text === undefined) return problem(ctx, 413, `body: must be at most ${FAULT_CONTROL_BODY_MAX_BYTES} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return problem(ctx, 400, 'body: must be a JSON object such as {"path":"/user/edit/points","mode":"apply-then-hang"}');
    }
    if (!isObject(body)) return problem(ctx, 400, 'body: must be a JSON object such as {"path":"/user/edit/points","mode":"apply-then-hang"}');
    if (body.mode === undefined) return problem(ctx, 400, `mode: is required, one of ${ALL_MODES}`);
    const parsed = v.safeParse(FaultRequest, body);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      const field = v.getDotPath(issue) ?? issue.path?.map((item) => String(item.key)).join('.') ?? 'body';
      return problem(ctx, 400, `${field}: ${issue.input === undefined && issue.kind === 'schema' ? 'is required' : issue.message}`);
    }
    const request = parsed.output;
    if (size() + request.count > FAULT_QUEUE_MAX) return problem(ctx, 409, `count: at most ${FAULT_QUEUE_MAX} faults may be queued (DELETE ${FAULT_CONTROL_PATH} clears them)`);
    if (!('path' in request)) {
      failures.push(...Array<SimulatorFailure>(request.count).fill(request.mode));
      return answer(ctx, 200, queued());
    }
    // A typo would queue a fault that no request ever meets.
    if (!queues.knownPath(request.path)) return problem(ctx, 400, `path: ${request.path} is not a path the simulator serves`);
    const fault: SimulatorFault = 'ms' in request ? { kind: FAULT_MODES[request.mode], ms: request.ms } : { kind: FAULT_MODES[request.mode] };
    faults.set(request.path, [...(faults.get(request.path) ?? []), ...Array<SimulatorFault>(request.count).fill(fault)]);
    return answer(ctx, 200, queued());
  };
}

/** The request body as text, or undefined past `max` bytes (the rest is not read). */
async function readBody(ctx: Context, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Resolves once the client or the simulator closed the connection. */
function connectionClosed(ctx: Context): Promise<void> {
  return new Promise((resolve) => (ctx.res.destroyed || ctx.req.socket.destroyed ? resolve() : ctx.res.once('close', () => resolve())));
}

async function withFault(ctx: Context, fault: SimulatorFault, apply: () => Promise<void>): Promise<void> {
  switch (fault.kind) {
    case 'hang':
      ctx.respond = false;
      return connectionClosed(ctx);
    case 'delayThenApply':
      await sleep(fault.ms, undefined, { ref: false });
      return apply();
    case 'applyThenDelay':
      await apply();
      return sleep(fault.ms, undefined, { ref: false });
    case 'applyThenHang':
      await apply();
      ctx.respond = false;
      return connectionClosed(ctx);
    case 'applyThenReset':
      await apply();
      ctx.respond = false;
      ctx.req.socket.resetAndDestroy();
  }
}

/** User lookup and the gold-finger endpoints, with the platform's validations and quirks. */
function adminRoutes(router: Router, platform: Platform): void {
  const usedRequestIds = new Set<string>();
  let lastTransactionId = 0;
  // Transaction ids look like the platform's oIds: millisecond timestamps, unique here.
  const newTransactionId = () => {
    lastTransactionId = Math.max(lastTransactionId + 1, platform.now());
    return String(lastTransactionId);
  };

  /** A gold-finger route: checks the type's key, maps Refusal to `code:-1` and Crash to HTTP 500. */
  function goldFinger(type: GoldFingerType, handle: (body: Body) => Body): RouterMiddleware {
    return (ctx) => {
      const body = isObject(ctx.request.body) ? ctx.request.body : {};
      try {
        const key = platform.keys[type];
        if (!key || body.goldFingerKey !== key) refuse(`金手指不正确（${type}）`);
        ctx.body = handle(body);
      } catch (error) {
        if (error instanceof Refusal) ctx.body = { code: -1, msg: error.message };
        else if (error instanceof Crash) respond(ctx, 500, 'html', SERVER_ERROR_PAGE);
        else throw error;
      }
    };
  }

  const knownUser = (body: Body) => userNamed(platform.users, body.userName) ?? refuse('用户不存在');
  const medalOwner = (body: Body) => {
    const user = userNamed(platform.users, body.userName);
    if (!user) throw new Crash();
    return user;
  };

  router.get('/api/user/getInfoById', (ctx) => {
    const user = platform.users.get(String(ctx.query.userId));
    ctx.body = user ? { code: 0, msg: '', data: { userName: user.userName, userNickname: user.nickname, userAvatarURL: user.avatar } } : { code: -1, msg: 'Query user error' };
  });

  router.get('/user/:userName', (ctx) => {
    const user = userNamed(platform.users, ctx.params.userName);
    ctx.body = user
      ? {
          oId: user.oId,
          userName: user.userName,
          userNickname: user.nickname,
          userAvatarURL: user.avatar,
          userPoint: user.points,
          sysMetal: JSON.stringify({ list: user.medals }),
        }
      : { code: -1 };
  });

  router.post(
    '/user/edit/points',
    goldFinger('point', (body) => {
      const { point, memo } = body;
      if (!isInt32(point) || point === 0) refuse('积分必须是非零整数');
      if (typeof memo !== 'string' || memo.length < 1 || memo.length > 255) refuse('备注长度必须在 1 到 255 之间');
      const source = pointsSource(body);
      const user = knownUser(body);
      // With source fields (newer builds) the change is guarded; without them a balance may go negative.
      if (source && usedRequestIds.has(source.requestId)) refuse('请求编号已使用');
      if (source && user.points + point < 0) refuse('积分不足');
      if (source) usedRequestIds.add(source.requestId);
      user.points += point;
      const transactionId = newTransactionId();
      user.ledger.push({ transactionId, point, memo, ...(source && { source }) });
      return { code: 0, msg: `积分变更成功，交易oId为：${transactionId}` };
    }),
  );

  router.post(
    '/user/edit/give-metal',
    goldFinger('metal', (body) => {
      const { name, description, attr, data, expireDate } = body;
      if (typeof name !== 'string' || !name || typeof description !== 'string' || typeof attr !== 'string' || typeof data !== 'string') {
        refuse('勋章参数不完整');
      }
      if (expireDate !== undefined && (typeof expireDate !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(expireDate))) {
        refuse('过期时间格式应为 yyyy-MM-dd');
      }
      const user = medalOwner(body);
      const medal = { name, description, attr, data, ...(expireDate !== undefined && { expireDate }) };
      user.medals = [...user.medals.filter((m) => m.name !== name), medal];
      return { code: 0, msg: '勋章安装成功。' };
    }),
  );

  router.post(
    '/user/edit/remove-metal',
    goldFinger('metal', (body) => {
      if (typeof body.name !== 'string' || !body.name) refuse('勋章名称不能为空');
      const user = medalOwner(body);
      user.medals = user.medals.filter((m) => m.name !== body.name);
      return { code: 0, msg: '勋章移除成功。' };
    }),
  );

  router.post(
    '/user/query/items',
    goldFinger('item', (body) => ({ code: 0, data: { ...knownUser(body).items } })),
  );

  router.post(
    '/user/edit/items',
    goldFinger('item', (body) => {
      const { item, sum } = body;
      if (typeof item !== 'string' || !item) refuse('物品名称不能为空');
      if (!isInt32(sum)) refuse('数量必须是整数');
      const user = knownUser(body);
      const after = (user.items[item] ?? 0) + sum;
      // The platform's quirk: a deduction below zero changes nothing and still reports success.
      if (after >= 0) user.items[item] = after;
      return { code: 0, msg: '物品变更成功。', data: { ...user.items } };
    }),
  );

  router.post(
    '/user/liveness',
    goldFinger('liveness', (body) => ({ liveness: knownUser(body).liveness })),
  );
}

/** The OpenID 2.0 provider: consent page, `sim_user` shortcut, check_authentication. */
function openIdRoutes(router: Router, platform: Platform, verifyRequests: Body[]): void {
  const secret = randomBytes(32);
  const assocHandle = `sim-${randomBytes(8).toString('hex')}`;
  /** Accepted nonces and when they were issued: each is good once. */
  const seenNonces = new Map<string, number>();

  function sign(fields: Body, signed: string[]): string {
    // OpenID key-value form: one `name:value\n` line per signed field, in the order listed.
    const text = signed.map((name) => `${name}:${String(fields[`openid.${name}`] ?? '')}\n`).join('');
    return createHmac('sha256', secret).update(text).digest('base64');
  }

  function assertionUrl(base: string, returnTo: string, user: SimulatorUser): string {
    const identity = `${base}/openid/id/${user.oId}`;
    const issued = `${new Date(platform.now()).toISOString().slice(0, 19)}Z`;
    const fields: Record<string, string> = {
      'openid.ns': OPENID_NS,
      'openid.op_endpoint': `${base}/openid`,
      'openid.mode': 'id_res',
      'openid.claimed_id': identity,
      'openid.identity': identity,
      'openid.assoc_handle': assocHandle,
      'openid.response_nonce': issued + randomBytes(8).toString('hex'),
      'openid.return_to': returnTo,
      'openid.signed': SIGNED_FIELDS.join(','),
    };
    return withQuery(returnTo, { ...fields, 'openid.sig': sign(fields, SIGNED_FIELDS) });
  }

  /** Marks the nonce used; false when it is malformed, too old or seen before. */
  function acceptNonce(nonce: unknown): boolean {
    const issued = typeof nonce === 'string' ? /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/.exec(nonce) : null;
    if (!issued) return false;
    const issuedAt = Date.parse(issued[0]);
    for (const [seen, at] of seenNonces) if (platform.now() - at > NONCE_LIFETIME_MS) seenNonces.delete(seen);
    if (Number.isNaN(issuedAt) || platform.now() - issuedAt > NONCE_LIFETIME_MS || seenNonces.has(nonce as string)) return false;
    seenNonces.set(nonce as string, issuedAt);
    return true;
  }

  // As the platform does: the signature is checked over the `key:value` lines of whatever
  // `openid.signed` names, which need not include the identity, and a parameter name may hold
  // anything. Relying parties must check the signed list and the names (OpenID 2.0 §10.1).
  function isGenuine(params: Body, base: string): boolean {
    const field = (name: string) => params[`openid.${name}`];
    const signed = typeof field('signed') === 'string' ? (field('signed') as string).split(',') : [];
    const sig = field('sig');
    const identity = field('identity');
    return (
      field('mode') === 'check_authentication' &&
      signed.length > 0 &&
      typeof sig === 'string' &&
      sameText(sig, sign(params, signed)) &&
      field('op_endpoint') === `${base}/openid` &&
      typeof identity === 'string' &&
      identity === field('claimed_id') &&
      identity.startsWith(`${base}/openid/id/`) &&
      /^\d+$/.test(identity.slice(`${base}/openid/id/`.length)) &&
      acceptableReturnTo(field('return_to')) &&
      // Last, so that a forged or broken assertion cannot burn a genuine one's nonce.
      acceptNonce(field('response_nonce'))
    );
  }

  function errorPage(ctx: Context, problem: string): void {
    respond(ctx, 400, 'html', page('OpenID error', `<h1>OpenID error</h1><p>${escapeHtml(problem)}</p>`));
  }

  function consentPage(returnTo: string, realm: string): string {
    const buttons = [...platform.users.values()]
      .map((u) => `<p><button type="submit" name="oId" value="${escapeHtml(u.oId)}">${escapeHtml(u.nickname)} (${escapeHtml(u.userName)})</button></p>`)
      .join('');
    return page(
      '授权登录',
      `<h1>授权登录</h1><p>${escapeHtml(realm)} 请求读取你的公开资料（profile.read）。选择要登录的用户：</p>` +
        `<form method="post" action="/openid/login/confirm">` +
        `<input type="hidden" name="return_to" value="${escapeHtml(returnTo)}"><input type="hidden" name="realm" value="${escapeHtml(realm)}">` +
        `${buttons}<p><button type="submit" name="cancel" value="1">取消</button></p></form>`,
    );
  }

  /** Sends the browser back with an assertion for this user, or with `error` when there is none. */
  function signIn(ctx: Context, returnTo: string, oId: unknown): void {
    const user = typeof oId === 'string' ? platform.users.get(oId) : undefined;
    ctx.redirect(user ? assertionUrl(platform.baseOf(ctx), returnTo, user) : withQuery(returnTo, { error: 'unknown_user' }));
  }

  router.get('/openid/login', (ctx) => {
    const q = (name: string) => (Array.isArray(ctx.query[name]) ? undefined : ctx.query[name]);
    const returnTo = q('openid.return_to');
    const realm = q('openid.realm');
    const problem =
      q('openid.ns') !== OPENID_NS || q('openid.mode') !== 'checkid_setup'
        ? 'openid.ns and openid.mode=checkid_setup are required'
        : q('openid.identity') !== IDENTIFIER_SELECT || q('openid.claimed_id') !== IDENTIFIER_SELECT
          ? 'openid.identity and openid.claimed_id must be identifier_select'
          : returnToProblem(returnTo, realm);
    if (problem) return errorPage(ctx, problem);
    // Automation shortcut: skip the consent page as if this user had confirmed.
    if (q('sim_user') !== undefined) return signIn(ctx, returnTo!, q('sim_user'));
    respond(ctx, 200, 'html', consentPage(returnTo!, realm!));
  });

  router.post('/openid/login/confirm', (ctx) => {
    const body = isObject(ctx.request.body) ? ctx.request.body : {};
    const problem = returnToProblem(body.return_to, body.realm);
    if (problem) return errorPage(ctx, problem);
    const returnTo = body.return_to as string;
    if (body.cancel !== undefined) return ctx.redirect(withQuery(returnTo, { error: 'cancelled' }));
    signIn(ctx, returnTo, body.oId);
  });

  router.post('/openid/verify', (ctx) => {
    if (isObject(ctx.request.body)) verifyRequests.push(ctx.request.body);
    const valid = isObject(ctx.request.body) && isGenuine(ctx.request.body, platform.baseOf(ctx));
    respond(ctx, 200, 'text/plain', `ns:${OPENID_NS}\nis_valid:${valid}\nscope:profile.read\n`);
  });
}

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}
