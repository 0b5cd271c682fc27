// Spec §4.6: a push is an event; delivery to connected clients follows the store's subscription,
// so a push accepted by one node reaches clients held by any node.
import { streams } from '../../domain/events.js';
import { newRecordId } from '../../services/runtime.js';
import type { HttpDeps } from '../deps.js';
import type { AdminGuards, AdminState } from '../middleware/admin.js';
import { exactRouter } from '../router.js';
import { MessagePushBody } from '../schemas.js';
import { parse } from '../validation.js';
import { actorOf } from './actor.js';

export function messageRouter({ store, clock }: HttpDeps, guards: AdminGuards) {
  const router = exactRouter<AdminState>('/adm/message');

  router.post('/push', ...guards.write('message:push'), async (ctx) => {
    const { oIds, userIds, name, data } = parse(MessagePushBody, ctx.request.body);
    const messageId = newRecordId();
    await store.append(
      streams.message(messageId),
      [{ type: 'MessagePushed', data: { messageId, name, data, oIds, userIds, at: clock.now(), ...actorOf(ctx) } }],
      { expectedRevision: 'no_stream' },
    );
    ctx.body = { code: 0, msg: 'success' };
  });

  return router;
}
