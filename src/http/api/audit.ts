// Auditors: a user's points edits, medals, item edits and VIP grants, oldest first, paged by log
// position. Read from the local history only: no user sync, no platform call.
import { ItemsAuditPage, MedalAuditPage, PointsAuditPage, VipAuditPage } from '../../contract/answers.js';
import { AuditQuery, OIdParam } from '../../contract/requests.js';
import { AuditQueries } from '../../projections/audit.js';
import { reaches, route } from '../route.js';

const PAGING =
  "Oldest first, from the local history (no platform call): an oId the service never acted on has no entries. `limit`, `after` and `before` page it by log position. A key sees its own app's entries only, unless it was created for every app (`--all-apps`).";

export const auditRoutes = [
  route({
    method: 'get',
    path: '/adm/audit/points/:oId',
    tag: 'audit',
    summary: "A user's points edits with their outcomes",
    description: PAGING,
    access: { kind: 'apiKey', permission: 'audit:read' },
    params: OIdParam,
    query: AuditQuery,
    ok: { description: 'One page of history', json: PointsAuditPage },
    handle: async (_ctx, { params: { oId }, query, caller }, { readModels, store }) => ({
      code: 0 as const,
      msg: 'success',
      data: await new AuditQueries({ ...readModels, store }).points(oId, query, (appId) => reaches(caller, appId)),
    }),
  }),

  route({
    method: 'get',
    path: '/adm/audit/medals/:oId',
    tag: 'audit',
    summary: "A user's medal gives and removals with their outcomes",
    description: PAGING,
    access: { kind: 'apiKey', permission: 'audit:read' },
    params: OIdParam,
    query: AuditQuery,
    ok: { description: 'One page of history', json: MedalAuditPage },
    handle: async (_ctx, { params: { oId }, query, caller }, { readModels, store }) => ({
      code: 0 as const,
      msg: 'success',
      data: await new AuditQueries({ ...readModels, store }).medals(oId, query, (appId) => reaches(caller, appId)),
    }),
  }),

  route({
    method: 'get',
    path: '/adm/audit/items/:oId',
    tag: 'audit',
    summary: "A user's item edits with their outcomes",
    description: PAGING,
    access: { kind: 'apiKey', permission: 'audit:read' },
    params: OIdParam,
    query: AuditQuery,
    ok: { description: 'One page of history', json: ItemsAuditPage },
    handle: async (_ctx, { params: { oId }, query, caller }, { readModels, store }) => ({
      code: 0 as const,
      msg: 'success',
      data: await new AuditQueries({ ...readModels, store }).items(oId, query, (appId) => reaches(caller, appId)),
    }),
  }),

  route({
    method: 'get',
    path: '/adm/audit/vip/:oId',
    tag: 'audit',
    summary: "A user's VIP grants and renewals",
    description: PAGING,
    access: { kind: 'apiKey', permission: 'audit:read' },
    params: OIdParam,
    query: AuditQuery,
    ok: { description: 'One page of history', json: VipAuditPage },
    handle: async (_ctx, { params: { oId }, query, caller }, { readModels, store }) => ({
      code: 0 as const,
      msg: 'success',
      data: await new AuditQueries({ ...readModels, store }).vip(oId, query, (appId) => reaches(caller, appId)),
    }),
  }),
];
