// A push is an event; delivery to connected clients follows the store's subscription, so a push
// accepted by one node reaches clients held by any node.
import { hash } from 'node:crypto';
import { setImmediate as yieldTurn } from 'node:timers/promises';
import { pushDataProblem, pushRecipientsProblem } from '../../domain/jsonBounds.js';
import { messageDecider } from '../../domain/message.js';
import { streams } from '../../domain/events.js';
import { handleCommand } from '../../services/commandHandler.js';
import { newRecordId } from '../../system/ids.js';
import type { ReadModels } from '../deps.js';
import { PushAnswer } from '../../contract/answers.js';
import { actorOf, formatBytes, route, type ApiSettings } from '../route.js';
import { MessagePushBody } from '../../contract/requests.js';
import { invalid } from '../validation.js';
import { RecipientBudget } from '../middleware/recipientBudget.js';

/** Ids placed per event-loop turn: a push to thousands lets other requests in between its slices. */
const IDS_PER_TURN = 1000;

/**
 * Who the push reaches, as far as this service knows when it accepts it: each given id that has
 * an open connection on a node that has not stopped (ClockReading), that names a known user with none, or that names no user.
 */
async function deliveryReport({ users, clients }: ReadModels, stoppedNodes: ReadonlySet<string>, oIds: string[], userIds: string[]) {
  const report = { online: [] as string[], offline: [] as string[], unknown: [] as string[] };
  const place = (id: string, userId: string | undefined) =>
    (userId === undefined ? report.unknown : clients.isOnline(userId, stoppedNodes) ? report.online : report.offline).push(id);
  const ids = [...oIds.map((oId) => ({ id: oId, oId })), ...userIds.map((id) => ({ id, oId: undefined }))];
  for (let i = 0; i < ids.length; i++) {
    if (i > 0 && i % IDS_PER_TURN === 0) await yieldTurn();
    const { id, oId } = ids[i]!;
    place(id, oId === undefined ? users.byUserId(id)?.id : users.byOid(oId)?.id);
  }
  return report;
}

/** Ids a kept push answer lists, per list: a retry's answer gives the counts and this many ids. */
export const KEPT_PUSH_IDS = 100;

type PushReport = Awaited<ReturnType<typeof deliveryReport>>;

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
  return epoch === undefined ? newRecordId() : `k${hash('sha256', `${appId}\n${epoch}`, 'hex').slice(0, 32)}`;
}

export function messageRoutes({ push, replayMs }: ApiSettings) {
  // Per app and per node: each service's routes get their own.
  const budget = push.recipientsPerSecond === undefined ? undefined : new RecipientBudget({ perSecond: push.recipientsPerSecond, burst: push.maxRecipients });
  return [
    route({
      method: 'post',
      path: '/adm/message/push',
      tag: 'realtime',
      summary: 'Push a realtime message to online users',
      description:
        'Each open connection of every targeted user receives an SSE `message` frame `{app_id, name, data}` (component `MessageFrame`). ' +
        "`oIds` are the platform's user ids; `userIds` are this service's own user ids (`user.id` in `PB_CONNECT` and `login` frames); give either or both. " +
        `\`data\` may nest at most ${push.maxDepth} levels and be at most ${formatBytes(push.maxBytes)} as JSON; \`oIds\` and \`userIds\` together name at most ${push.maxRecipients} recipients. ` +
        (push.recipientsPerSecond === undefined
          ? ''
          : `An app pushes to at most ${push.recipientsPerSecond} recipients per second on a node: a push takes what its size could name and gives back what it did not, and one that finds the app in debt gets 429 with \`Retry-After\`. `) +
        `A signed-in client that reconnects with \`Last-Event-ID\` within ${Math.round(replayMs / 1000)} s gets the messages it missed.`,
      access: { kind: 'apiKey', permission: 'message:push' },
      body: MessagePushBody,
      ok: { description: 'Accepted; `data` says which of the given ids were online, offline or unknown at that moment', json: PushAnswer },
      check({ body: { oIds, userIds, data } }, { pushLimits }) {
        const recipients = pushRecipientsProblem(oIds, userIds, pushLimits);
        if (recipients) throw invalid(oIds.length > 0 ? 'oIds' : 'userIds', recipients);
        const problem = pushDataProblem(data, pushLimits);
        if (problem) throw invalid('data', problem);
      },
      ...(budget && { guards: [budget.gate] }),
      keptAnswer: keptPushAnswer,
      async handle(ctx, { body: { oIds, userIds, name, data }, caller }, { store, clock, readModels, clockReading }) {
        budget?.settle(ctx.req, oIds.length + userIds.length);
        const claim = ctx.state.writeClaim;
        const messageId = messageIdFor(caller.appId, claim?.epoch);
        const command = { type: 'PushMessage', messageId, name, data, oIds, userIds, at: clock.now(), ...actorOf(caller) } as const;
        const known = { state: messageDecider.initialState(), revision: -1 };
        await handleCommand(ctx.state.work, store, streams.message(messageId), messageDecider, command, { known, fence: claim && (() => claim.fence()) });
        return { code: 0 as const, msg: 'success', data: await deliveryReport(readModels, clockReading().stoppedNodes, oIds, userIds) };
      },
    }),
  ];
}
