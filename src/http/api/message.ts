// Spec §4.6: a push is an event; delivery to connected clients follows the store's subscription,
// so a push accepted by one node reaches clients held by any node.
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
  const place = (id: string, userId: string | undefined) =>
    (userId === undefined ? report.unknown : clients.isOnline(userId) ? report.online : report.offline).push(id);
  for (const oId of oIds) place(oId, users.byOid(oId)?.id);
  for (const userId of userIds) place(userId, users.byUserId(userId)?.id);
  return report;
}

export const messageRoutes = ({ push, replayMs }: ApiSettings) => [
  route({
    method: 'post',
    path: '/adm/message/push',
    tag: 'realtime',
    summary: 'Push a realtime message to online users',
    description:
      'Each open connection of every targeted user receives an SSE `message` frame `{app_id, name, data}` (component `MessageFrame`). ' +
      '`oIds` are the platform\'s user ids; `userIds` are this service\'s own user ids (`user.id` in `PB_CONNECT` and `login` frames); give either or both. ' +
      `\`data\` may nest at most ${push.maxDepth} levels and be at most ${formatBytes(push.maxBytes)} as JSON. ` +
      `A signed-in client that reconnects with \`Last-Event-ID\` within ${Math.round(replayMs / 1000)} s gets the messages it missed.`,
    access: { kind: 'apiKey', permission: 'message:push' },
    body: MessagePushBody,
    ok: { description: 'Accepted; `data` says which of the given ids were online, offline or unknown at that moment', json: PushAnswer },
    async handle(_ctx, { body: { oIds, userIds, name, data }, caller }, { store, clock, readModels, pushLimits }) {
      const problem = pushDataProblem(data, pushLimits);
      if (problem) throw invalid('data', problem);
      const messageId = newRecordId();
      const command = { type: 'PushMessage', messageId, name, data, oIds, userIds, at: clock.now(), ...actorOf(caller) } as const;
      await handleCommand(store, streams.message(messageId), messageDecider, command, { known: { state: messageDecider.initialState(), revision: -1 } });
      return { code: 0 as const, msg: 'success', data: deliveryReport(readModels, oIds, userIds) };
    },
  }),
];
