// Spec §4.6: a push is an event; delivery to connected clients follows the store's subscription,
// so a push accepted by one node reaches clients held by any node.
import { streams } from '../../domain/events.js';
import { pushDataProblem } from '../../domain/jsonBounds.js';
import { messageDecider } from '../../domain/message.js';
import { handleCommand } from '../../services/commandHandler.js';
import { newRecordId } from '../../system/ids.js';
import type { HttpDeps } from '../deps.js';
import type { AdminGuards, AdminState } from '../middleware/admin.js';
import { exactRouter } from '../router.js';
import { MessagePushBody } from '../schemas.js';
import { invalid, parse } from '../validation.js';
import { actorOf } from './actor.js';

/**
 * Who the push reaches, as far as this service knows when it accepts it: each given id that has
 * an open connection on any node, that names a known user with none, or that names no user.
 */
function deliveryReport({ users, clients }: HttpDeps['readModels'], oIds: string[], userIds: string[]) {
  const report = { online: [] as string[], offline: [] as string[], unknown: [] as string[] };
  const place = (id: string, userId: string | undefined) =>
    (userId === undefined ? report.unknown : clients.isOnline(userId) ? report.online : report.offline).push(id);
  for (const oId of oIds) place(oId, users.byOid(oId)?.id);
  for (const userId of userIds) place(userId, users.byUserId(userId)?.id);
  return report;
}

export function messageRouter({ store, clock, readModels, pushLimits }: HttpDeps, guards: AdminGuards) {
  const router = exactRouter<AdminState>('/adm/message');

  router.post('/push', ...guards.write('message:push'), async (ctx) => {
    const { oIds, userIds, name, data } = parse(MessagePushBody, ctx.request.body);
    const problem = pushDataProblem(data, pushLimits);
    if (problem) throw invalid('data', problem);
    const messageId = newRecordId();
    const command = { type: 'PushMessage', messageId, name, data, oIds, userIds, at: clock.now(), ...actorOf(ctx) } as const;
    await handleCommand(store, streams.message(messageId), messageDecider, command, { known: { state: messageDecider.initialState(), revision: -1 } });
    ctx.body = { code: 0, msg: 'success', data: deliveryReport(readModels, oIds, userIds) };
  });

  return router;
}
