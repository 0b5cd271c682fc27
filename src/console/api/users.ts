// Users: the newest, or a search by oId or name; one user's page (profile, VIP, every platform operation with its
// outcome, sessions, open connections); a test push to them.
import { NotFoundError } from '../../domain/errors.js';
import { streams } from '../../domain/events.js';
import { pushDataProblem } from '../../domain/jsonBounds.js';
import { messageDecider } from '../../domain/message.js';
import { OIdParam, TestPushBody, UserSearchQuery, type PushSent, type UserBrief, type UserDetail, type UserList } from '../../contract/console.js';
import { invalid } from '../../http/validation.js';
import type { IndexedUser } from '../consoleIndex.js';
import { handleCommand } from '../../services/commandHandler.js';
import { readOperations } from '../../projections/operations.js';
import { vipHistory } from '../../projections/vipHistory.js';
import { newRecordId } from '../../system/ids.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleOperator } from '../operator.js';
import { consoleRoute } from './consoleRoute.js';
import { operationView } from './views.js';

const SEARCH_LIMIT = 50;

const brief = (user: IndexedUser, { readModels, clockReading }: ConsoleDeps): UserBrief => ({
  ...user,
  online: readModels.clients.isOnline(user.userId, clockReading().stoppedNodes),
});

async function userDetail(oId: string, deps: ConsoleDeps): Promise<UserDetail> {
  const { index, readModels, clock } = deps;
  const indexed = index.user(oId);
  const user = readModels.users.byOid(oId);
  if (!indexed || !user) throw new NotFoundError(`No user ${oId} is known to this service`);
  const now = clock.now();
  return {
    user: brief(indexed, deps),
    avatar: user.avatar,
    vip: readModels.vip.records(user.id).map(({ id, quality, expired, created, updated }) => ({ id, quality, expired, created, updated })),
    vipHistory: (await vipHistory(deps.store, user.id)).map(({ position, action, quality, expired, previousExpired, appId, at }) => ({
      position,
      action,
      quality,
      expired,
      ...(previousExpired !== undefined && { previousExpired }),
      appId,
      at,
    })),
    operations: (await readOperations(deps.store, readModels.operations.history(oId))).map(operationView),
    sessions: index.sessionsOf(oId).map((session) => ({ ...session, live: session.ended === undefined && session.expires > now })),
    connections: [...readModels.clients.all()].filter((client) => client.user?.oId === oId).map((client) => ({ clientId: client.clientId, node: client.node ?? null })),
  };
}

export const userEndpoints = [
  consoleRoute({
    method: 'get',
    path: '/console/api/users',
    query: UserSearchQuery,
    handle: (_ctx, { query }, deps): UserList => ({
      users: (query.q ? deps.index.searchUsers(query.q, SEARCH_LIMIT) : deps.index.newestUsers(SEARCH_LIMIT)).map((user) => brief(user, deps)),
    }),
  }),
  consoleRoute({
    method: 'get',
    path: '/console/api/users/:oId',
    params: OIdParam,
    handle: (_ctx, { params }, deps) => userDetail(params.oId, deps),
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/users/:oId/push',
    params: OIdParam,
    body: TestPushBody,
    async handle(ctx, { params: { oId }, body: { name, data } }, { store, clock, readModels, pushLimits, clockReading }): Promise<PushSent> {
      const user = readModels.users.byOid(oId);
      if (!user) throw new NotFoundError(`No user ${oId} is known to this service`);
      const problem = pushDataProblem(data, pushLimits);
      if (problem) throw invalid('data', problem);
      const messageId = newRecordId();
      // Delivered like any push; the app is `console` and the key names the operator.
      const command = {
        type: 'PushMessage' as const,
        messageId,
        name,
        data,
        oIds: [oId],
        userIds: [],
        at: clock.now(),
        appId: 'console',
        keyId: consoleOperator(ctx.state.operator.oId).name,
      };
      await handleCommand(ctx.state.work, store, streams.message(messageId), messageDecider, command, { known: { state: messageDecider.initialState(), revision: -1 } });
      return { messageId, online: readModels.clients.isOnline(user.id, clockReading().stoppedNodes) };
    },
  }),
];
