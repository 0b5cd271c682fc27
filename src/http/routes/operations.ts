// An operation whose outcome is unknown is settled by someone who checked the platform; the key's
// answer and the audit follow the resolution.
import type { HttpDeps } from '../deps.js';
import type { AdminGuards, AdminState } from '../middleware/admin.js';
import { exactRouter } from '../router.js';
import { OperationIdParam, ResolveBody } from '../schemas.js';
import { parse } from '../validation.js';
import { actorOf } from './actor.js';

export function operationsRouter({ outcomes }: HttpDeps, guards: AdminGuards) {
  const router = exactRouter<AdminState>('/adm/operations');

  router.post('/:operationId/resolve', ...guards.write('operations:resolve'), async (ctx) => {
    const { operationId } = parse(OperationIdParam, ctx.params);
    const { applied, note } = parse(ResolveBody, ctx.request.body);
    const record = await outcomes.resolve(operationId, applied, note, { kind: 'app', ...actorOf(ctx) });
    ctx.body = { code: 0, msg: 'success', data: { operationId, status: record.status } };
  });

  return router;
}
