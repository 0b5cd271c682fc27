// An operation whose outcome is unknown is settled by someone who checked the platform; the key's
// answer and the audit follow the resolution.
import { ResolveAnswer } from '../../contract/answers.js';
import { route } from '../route.js';
import { OperationIdParam, ResolveBody } from '../../contract/requests.js';

export const operationRoutes = [
  route({
    method: 'post',
    path: '/adm/operations/:operationId/resolve',
    tag: 'audit',
    summary: 'Resolve an operation whose outcome is unknown',
    description:
      'Records what someone who checked the platform found. The Idempotency-Key of the request that sent it then answers accordingly (200 when applied, 409 when not), and the audit shows the resolution.',
    access: { kind: 'apiKey', permission: 'operations:resolve' },
    params: OperationIdParam,
    body: ResolveBody,
    ok: { description: 'Resolved', json: ResolveAnswer },
    errors: [404, 409],
    async handle(ctx, { params: { operationId }, body: { applied, note }, caller }, { outcomes }) {
      const fence = ctx.state.writeClaim?.fence;
      const record = await outcomes.resolve(operationId, applied, note, { kind: 'app', appId: caller.appId, keyId: caller.keyId }, fence);
      return { code: 0 as const, msg: 'success', data: { operationId, status: record.status as 'applied' | 'failed' } };
    },
  }),
];
