// Operations whose outcome is unknown, oldest first, with everything the log knows of them; an
// operator who checked the platform resolves each as applied or not. Resolved operations whose
// sender had the platform's answer afterwards are listed for review beside them.
import { OperationIdParam, ResolveBody, type OperationList, type OperationView } from '../../contract/console.js';
import { consoleOperator } from '../operator.js';
import { consoleRoute } from './consoleRoute.js';
import { operationView } from './views.js';
import { readOperation } from '../../projections/operations.js';

export const operationEndpoints = [
  consoleRoute({
    method: 'get',
    path: '/console/api/operations/unknown',
    handle: (_ctx, _input, { readModels }): OperationList => ({ operations: readModels.operations.withoutOutcome('unknown').map(operationView) }),
  }),
  consoleRoute({
    method: 'get',
    path: '/console/api/operations/conflicts',
    async handle(_ctx, _input, { store, readModels }): Promise<OperationList> {
      const records = await Promise.all(readModels.operations.answeredAfterResolution().map((id) => readOperation(store, id)));
      return { operations: records.filter((record) => record !== undefined).map(operationView) };
    },
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/operations/:operationId/resolve',
    params: OperationIdParam,
    body: ResolveBody,
    async handle(ctx, { params: { operationId }, body: { applied, note } }, { outcomes }): Promise<OperationView> {
      return operationView(await outcomes.resolve(ctx.state.work, operationId, applied, note, consoleOperator(ctx.state.operator.oId)));
    },
  }),
];
