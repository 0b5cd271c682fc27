// An operation whose outcome is unknown is settled by someone who checked the platform; the key's
// answer and the audit follow the resolution.
import { OperationListAnswer, ResolveAnswer } from '../../contract/answers.js';
import { reaches, route } from '../route.js';
import { OperationIdParam, OperationListQuery, ResolveBody } from '../../contract/requests.js';
import { operationMatches } from '../../domain/operation.js';
import { toSpecTimestamp } from '../../domain/time.js';

export const operationRoutes = [
  route({
    method: 'get',
    path: '/adm/operations',
    tag: 'audit',
    summary: 'Operations whose outcome is not known',
    description:
      "Oldest first: the operations whose outcome is unknown (sent, then no trustworthy answer: resolve each after checking the platform) and, unless `status` says otherwise, those still pending. Each with the Idempotency-Key and X-Request-Id its caller sent, so that `search` finds what a caller quotes. A key lists its own app's operations only, unless it was created for every app (`--all-apps`).",
    access: { kind: 'apiKey', permission: 'operations:resolve' },
    query: OperationListQuery,
    ok: { description: 'The operations, oldest first', json: OperationListAnswer },
    handle(_ctx, { query: { status, search, limit }, caller }, { readModels }) {
      const statuses = status ? [status] : (['pending', 'unknown'] as const);
      const matched = statuses
        .flatMap((wanted) => readModels.operations.withoutOutcome(wanted))
        .filter((record) => reaches(caller, record.appId) && (!search || operationMatches(record, search)))
        .sort((a, b) => a.position - b.position);
      const operations = matched.slice(0, limit).map((record) => ({
        operationId: record.operationId,
        kind: record.kind,
        status: record.status as 'unknown' | 'pending',
        oId: record.oId,
        userName: record.userName,
        request: { ...record.request },
        appId: record.appId,
        keyId: record.keyId,
        requestedAt: toSpecTimestamp(record.requestedAt),
        ...(record.node !== undefined && { node: record.node }),
        ...(record.idempotencyKey !== undefined && { idempotencyKey: record.idempotencyKey }),
        ...(record.requestId !== undefined && { requestId: record.requestId }),
        ...(record.unknownReason !== undefined && { reason: record.unknownReason }),
      }));
      return { code: 0 as const, msg: 'success', data: { operations, more: matched.length > limit } };
    },
  }),
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
      const record = await outcomes.resolve(ctx.state.work, operationId, applied, note, by, fence, (appId) => reaches(caller, appId));
      return { code: 0 as const, msg: 'success', data: { operationId, status: record.status as 'applied' | 'failed' } };
    },
  }),
];
