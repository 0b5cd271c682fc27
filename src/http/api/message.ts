// A push is an event; delivery to connected clients follows the store's subscription, so a push
// accepted by one node reaches clients held by any node.
import { createHash } from 'node:crypto';
import { pushDataProblem } from '../../domain/jsonBounds.js';
import { messageDecider } from '../../domain/message.js';
import { streams } from '../../domain/events.js';
import { handleCommand } from '../../services/commandHandler.js';
import { newRecordId } from '../../system/ids.js';
import type { ReadModels } from '../deps.js';
import { PushAnswer } from '../../contract/answers.js';
import { actorOf, formatBytes, route, type ApiSettings } from '../route.js';
import { MessagePushBody } from '../../contract/requests.js';
import { invalid } from '../validation.js';

/**
 * Who the push reaches, as far as this service knows when it accepts it: each given id that has
 * an open connection on any node, that names a known user with none, or that names no user.
 */
function deliveryReport({ users, clients }: ReadModels, oIds: string[], userIds: string[]) {
  const report = { online: [] as string[], offline: [] as string[], unknown: [] as string[] };
  const place = (id: string, userId: string | undefined) => (userId === undefined ? report.unknown : clients.isOnline(userId) ? report.online : report.offline).push(id);
  for (const oId of oIds) place(oId, users.byOid(oId)?.id);
  for (const userId of userIds) place(userId, users.byUserId(userId)?.id);
  return report;
}

/** Ids a kept push answer lists, per list: a retry's answer gives the counts and this many ids. */
export const KEPT_PUSH_IDS = 100;

type PushReport = ReturnType<typeof deliveryReport>;

/**
 * A push answer as an Idempotency-Key keeps it: a push may name thousands of ids, and the key
 * keeps its answer for hours; the counts stay whole and each list its first KEPT_PUSH_IDS ids.
 */
function keptPushAnswer(body: unknown): unknown {
  const answer = body as { code: number; msg: string; data?: PushReport & { counts?: unknown } };
  const data = answer.data;
  if (!data || answer.code !== 0 || (data.online.length <= KEPT_PUSH_IDS && data.offline.length <= KEPT_PUSH_IDS && data.unknown.length <= KEPT_PUSH_IDS)) return body;
  return {
    ...answer,
    data: {
      online: data.online.slice(0, KEPT_PUSH_IDS),
      offline: data.offline.slice(0, KEPT_PUSH_IDS),
      unknown: data.unknown.slice(0, KEPT_PUSH_IDS),
      counts: { online: data.online.length, offline: data.offline.length, unknown: data.unknown.length },
    },
  };
}

/**
 * The message's id: with an Idempotency-Key, derived from the app and the key's current use, so
 * that whichever request of that use records it (a retry after a crash or an ambiguous append
 * included), it is recorded, and so delivered, once.
 */
function messageIdFor(appId: string, epoch: string | undefined): string {
  return epoch === undefined ? newRecordId() : `k${createHash('sha256').update(`${appId}\n${epoch}`).digest('hex').slice(0, 32)}`;
}

export const messageRoutes = ({ push, replayMs }: ApiSettings) => [
  route({
    method: 'post',
    path: '/adm/message/push',
    tag: 'realtime',
    summary: 'Push a realtime message to online users',
    description:
      'Each open connection of every targeted user receives an SSE `message` frame `{app_id, name, data}` (component `MessageFrame`). ' +
      "`oIds` are the platform's user ids; `userIds` are this service's own user ids (`user.id` in `PB_CONNECT` and `login` frames); give either or both. " +
      `\`data\` may nest at most ${push.maxDepth} levels and be at most ${formatBytes(push.maxBytes)} as JSON. ` +
      `A signed-in client that reconnects with \`Last-Event-ID\` within ${Math.round(replayMs / 1000)} s gets the messages it missed.`,
    access: { kind: 'apiKey', permission: 'message:push' },
    body: MessagePushBody,
    ok: { description: 'Accepted; `data` says which of the given ids were online, offline or unknown at that moment', json: PushAnswer },
    check({ body: { data } }, { pushLimits }) {
      const problem = pushDataProblem(data, pushLimits);
      if (problem) throw invalid('data', problem);
    },
    keptAnswer: keptPushAnswer,
    async handle(ctx, { body: { oIds, userIds, name, data }, caller }, { store, clock, readModels }) {
      const claim = ctx.state.writeClaim;
      const messageId = messageIdFor(caller.appId, claim?.epoch);
      const command = { type: 'PushMessage', messageId, name, data, oIds, userIds, at: clock.now(), ...actorOf(caller) } as const;
      const known = { state: messageDecider.initialState(), revision: -1 };
      await handleCommand(store, streams.message(messageId), messageDecider, command, { known, fence: claim && (() => claim.fence()) });
      return { code: 0 as const, msg: 'success', data: deliveryReport(readModels, oIds, userIds) };
    },
  }),
];
