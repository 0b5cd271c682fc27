// An operation whose outcome is unknown is settled by someone who checked the platform; the key's
// answer and the audit follow the resolution.
import { ResolveAnswer } from '../../contract/answers.js';
import { reaches, route } from '../route.js';
import { OperationIdParam, ResolveBody } from '../../contract/requests.js';

export const operationRoutes = [
  route({
    method: 'post',
    path: '/adm/operations/:operationId/resolve',
    tag: 'audit',
    summary: 'Resolve an operation whose outcome is unknown',
    description:
      "Records what someone who checked the platform found. The Idempotency-Key of the request that sent it then answers accordingly (200 when applied, 409 when not), and the audit shows the resolution. A key resolves its own app's operations only, unless it was created for every app (`--all-apps`); another app's operation answers 404.",
    access: { kind: 'apiKey', permission: 'operations:resolve' },
    params: OperationIdParam,
    body: ResolveBody,
    ok: { description: 'Resolved', json: ResolveAnswer },
    errors: [404, 409],
    async handle(ctx, { params: { operationId }, body: { applied, note }, caller }, { outcomes }) {
      const fence = ctx.state.writeClaim?.fence;
      const by = { kind: 'app' as const, appId: caller.appId, keyId: caller.keyId, ...(caller.allApps && { allApps: true as const }) };
      // Another app's operation is not there for this key (404, as for no operation at all).
      const record = await outcomes.resolve(operationId, applied, note, by, fence, (appId) => reaches(caller, appId));
      return { code: 0 as const, msg: 'success', data: { operationId, status: record.status as 'applied' | 'failed' } };
    },
  }),
];
