// Issue 4, audit: a user's points edits and VIP grants, oldest first, paged by log position.
// Read from the local history only: no user sync, no platform call (docs/decisions.md).
import Router from '@koa/router';
import { AuditQueries, pageOf } from '../../services/audit.js';
import type { HttpDeps } from '../deps.js';
import { requirePermission, type AuthState } from '../middleware/apiKey.js';
import { AuditQuery, OIdParam } from '../schemas.js';
import { parse } from '../validation.js';

export function auditRouter({ readModels, clock }: HttpDeps): Router<AuthState> {
  const router = new Router<AuthState>({ prefix: '/adm/audit' });
  const allow = requirePermission(readModels.apiKeys, clock, 'audit:read');
  const audit = new AuditQueries(readModels);

  router.get('/points/:oId', allow, (ctx) => {
    const { oId } = parse(OIdParam, ctx.params);
    const paging = parse(AuditQuery, ctx.query);
    ctx.body = { code: 0, msg: 'success', data: pageOf(audit.points(oId), paging) };
  });

  router.get('/vip/:oId', allow, (ctx) => {
    const { oId } = parse(OIdParam, ctx.params);
    const paging = parse(AuditQuery, ctx.query);
    ctx.body = { code: 0, msg: 'success', data: pageOf(audit.vip(oId), paging) };
  });

  return router;
}
