// Fills a fresh embedded store with EVENTS mixed events through the SQLite adapter itself, in
// batches (many appends per event-loop turn share one transaction, as in the service).
// The mix follows what the service writes: user syncs (registrations, some profile changes),
// VIP grants and renewals, platform operations as requested/outcome pairs (points most often,
// then items and medals; a few rejected, failed or unknown), message pushes, and browser visits
// (connect, sign in through the login page, disconnect; or reconnect with a session).
// Argument: JSON {file, events}. Prints `RESULT {events, seconds, bytes}`.
import { statSync } from 'node:fs';
import { streams, type DomainEvent } from '../src/domain/events.js';
import type { EventToAppend } from '../src/store/port.js';
import { SqliteEventStore } from '../src/store/sqlite.js';

const { file, events: target } = JSON.parse(process.argv[2]!) as { file: string; events: number };

// mulberry32: a small deterministic PRNG, so every run replays the same log.
let seed = 0x5eed;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const id = () => Array.from({ length: 15 }, () => ALPHABET[Math.floor(random() * 36)]).join('');

const USERS = Math.max(100, Math.round(target / 50));
const APPS = [
  { appId: 'moyu-game', keyId: id() },
  { appId: 'fishing-rpg', keyId: id() },
  { appId: 'checkin-bot', keyId: id() },
];
const users = Array.from({ length: USERS }, (_, i) => ({
  oId: String(1_630_000_000_000 + i * 7919),
  userId: id(),
  name: `user_${i.toString(36)}`,
  registered: false,
  vip: {} as Record<string, string | undefined>,
}));

let clock = Date.parse('2026-01-01T00:00:00Z');
const at = () => {
  clock += 37;
  return new Date(clock).toISOString();
};

const store = new SqliteEventStore({ file });
let written = 0;
let batch: Array<Promise<unknown>> = [];

function append(stream: string, events: DomainEvent[]): void {
  written += events.length;
  batch.push(store.append(stream, events as EventToAppend[]));
}

function register(user: (typeof users)[number]): void {
  if (user.registered) return;
  user.registered = true;
  append(streams.user(user.oId), [
    {
      type: 'UserRegistered',
      data: {
        userId: user.userId,
        oId: user.oId,
        name: user.name,
        nickname: `${user.name} 的昵称`,
        avatar: `https://file.fishpi.cn/avatar/${user.oId}.png?imageView2/1/w/210/h/210/interlace/0/q/100`,
        at: at(),
      },
    },
  ]);
}

function operation(user: (typeof users)[number]): void {
  const app = pick(APPS);
  const operationId = id();
  const roll = random();
  const requestedAt = at();
  const base = { operationId, oId: user.oId, userId: user.userId, userName: user.name, at: requestedAt, ...app };
  let requested: DomainEvent;
  let bag: Record<string, number> | undefined;
  if (roll < 0.75) {
    requested = {
      type: 'PointsEditRequested',
      data: {
        ...base,
        request: { point: Math.floor(random() * 200) - 50 || 1, memo: pick(['每日签到奖励', 'game reward: level cleared', 'shop purchase', '活动奖励 — 周末钓鱼大赛']) },
      },
    };
  } else if (roll < 0.9) {
    requested = { type: 'ItemsEditRequested', data: { ...base, request: { item: pick(['checkin1day', 'patchCheckinCard', 'metalTicket', 'nameCard']), sum: pick([1, 2, -1]) } } };
    bag = { checkin1day: Math.floor(random() * 5), patchCheckinCard: Math.floor(random() * 3), metalTicket: 1 };
  } else if (roll < 0.97) {
    requested = {
      type: 'MedalGiveRequested',
      data: {
        ...base,
        request: {
          name: pick(['摸鱼达人', 'Fishing Champion', '签到王']),
          description: 'Given for an outstanding season in the fishing game',
          attr: 'url=https://file.fishpi.cn/medal/fish.png&backcolor=ffffff&fontcolor=ff3030',
          data: '',
        },
      },
    };
  } else {
    requested = { type: 'MedalRemoveRequested', data: { ...base, request: { name: '签到王' } } };
  }
  const outcomeRoll = random();
  const outcomeBase = { operationId, oId: user.oId, at: at() };
  const outcome: DomainEvent =
    outcomeRoll < 0.95
      ? { type: 'OperationApplied', data: { ...outcomeBase, message: `积分变更成功，交易oId为：${1_700_000_000_000 + written}`, ...(bag && { bag }) } }
      : outcomeRoll < 0.98
        ? { type: 'OperationRejected', data: { ...outcomeBase, message: '积分不足' } }
        : outcomeRoll < 0.99
          ? { type: 'OperationFailed', data: { ...outcomeBase, reason: 'cannot reach the platform (ECONNREFUSED) for /user/edit/points' } }
          : { type: 'OperationOutcomeUnknown', data: { ...outcomeBase, reason: 'the platform did not answer within 5000 ms' } };
  append(streams.operation(operationId), [requested]);
  append(streams.operation(operationId), [outcome]);
}

function vip(user: (typeof users)[number]): void {
  const app = pick(APPS);
  const quality = random() < 0.8 ? 'vip' : 'svip';
  const expired = new Date(clock + Math.floor(random() * 365) * 86_400_000).toISOString().replace(/\.\d+Z$/, '.000Z');
  const recordId = user.vip[quality];
  if (recordId) {
    append(streams.vip(user.userId), [{ type: 'VipRenewed', data: { recordId, userId: user.userId, quality, expired, previousExpired: expired, at: at(), ...app } }]);
  } else {
    user.vip[quality] = id();
    append(streams.vip(user.userId), [{ type: 'VipGranted', data: { recordId: user.vip[quality]!, userId: user.userId, quality, expired, at: at(), ...app } }]);
  }
}

function push(): void {
  const app = pick(APPS);
  const messageId = id();
  const count = random() < 0.9 ? 1 : random() < 0.9 ? 5 : 100;
  const targets = Array.from({ length: count }, () => pick(users));
  append(streams.message(messageId), [
    {
      type: 'MessagePushed',
      data: {
        messageId,
        name: pick(['reward', 'notice', 'chat']),
        data: { title: '你获得了新的奖励', body: 'Level 12 cleared — 50 points added', level: 12 },
        oIds: targets.map((u) => u.oId),
        userIds: [],
        at: at(),
        ...app,
      },
    },
  ]);
}

/** A browser visit: connect, sign in through the login page (a session), then disconnect. */
function visit(user: (typeof users)[number]): void {
  const clientId = `${id()}${id()}`;
  if (random() < 0.6) {
    // A returning visitor: the session cookie signs the connection in at once.
    const session = { sessionId: `${id()}${id()}`, userId: user.userId, oId: user.oId };
    append(streams.client(clientId), [{ type: 'ClientConnected', data: { clientId, at: at(), session } }]);
    append(streams.client(clientId), [{ type: 'ClientDisconnected', data: { clientId, reason: 'closed', at: at() } }]);
    return;
  }
  const stateHash = (id() + id() + id() + id() + id()).slice(0, 64);
  const sessionId = `${id()}${id()}`;
  append(streams.client(clientId), [{ type: 'ClientConnected', data: { clientId, at: at() } }]);
  append(streams.login(stateHash), [{ type: 'LoginStarted', data: { stateHash, clientId, callbackUrl: 'https://bridge.example.com/fishpi/callback', expires: at(), at: at() } }]);
  append(streams.login(stateHash), [{ type: 'LoginCompleted', data: { stateHash, clientId, userId: user.userId, oId: user.oId, sessionId, at: at() } }]);
  append(streams.session(sessionId), [{ type: 'SessionStarted', data: { sessionId, userId: user.userId, oId: user.oId, expires: at(), at: at() } }]);
  append(streams.client(clientId), [{ type: 'ClientSignedIn', data: { clientId, userId: user.userId, oId: user.oId, sessionId, at: at() } }]);
  append(streams.client(clientId), [{ type: 'ClientDisconnected', data: { clientId, reason: 'closed', at: at() } }]);
}

const started = performance.now();
for (const app of APPS) {
  append(streams.apiKey(app.keyId), [
    { type: 'ApiKeyIssued', data: { keyId: app.keyId, appId: app.appId, app: app.appId, hash: id() + id() + id() + id(), permissions: ['*'], expires: null, at: at() } },
  ]);
}
while (written < target) {
  while (batch.length < 2000 && written < target) {
    const user = pick(users);
    if (!user.registered) {
      register(user);
      continue;
    }
    const roll = random();
    if (roll < 0.62) operation(user);
    else if (roll < 0.8) vip(user);
    else if (roll < 0.9) push();
    else if (roll < 0.97) visit(user);
    else
      append(streams.user(user.oId), [
        { type: 'UserProfileChanged', data: { userId: user.userId, oId: user.oId, changes: { nickname: `${user.name} ✨${Math.floor(random() * 100)}` }, at: at() } },
      ]);
  }
  await Promise.all(batch);
  batch = [];
}
await store.close();
process.stdout.write(`RESULT ${JSON.stringify({ events: written, seconds: (performance.now() - started) / 1000, bytes: statSync(file).size })}\n`);
