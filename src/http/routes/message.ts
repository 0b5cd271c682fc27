// Spec §4.6: a push is an event; delivery to connected clients follows the store's subscription,
// so a push accepted by one node reaches clients held by any node.
import Router from '@koa/router';
import { streams } from '../../domain/events.js';
import { pushDataProblem } from '../../domain/jsonBounds.js';
import { newRecordId } from '../../services/runtime.js';
import type { HttpDeps } from '../deps.js';
import { requirePermission, type AuthState } from '../middleware/apiKey.js';
import { MessagePushBody } from '../schemas.js';
import { invalid, parse } from '../validation.js';
import { actorOf } from './platformOperations.js';

export function messageRouter({ store, readModels, clock, pushLimits }: HttpDeps): Router<AuthState> {
  const router = new Router<AuthState>({ prefix: '/adm/message' });

  router.post('/push', requirePermission(readModels.apiKeys, clock, 'message:push'), async (ctx) => {
    const { oIds, userIds, name, data } = parse(MessagePushBody, ctx.request.body);
    const problem = pushDataProblem(data, pushLimits);
    if (problem) throw invalid('data', problem);
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
