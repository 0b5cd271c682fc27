// Issue 4, audit: a user's points edits and VIP grants, oldest first, paged by log position.
// Read from the local history only: no user sync, no platform call (docs/decisions.md).
import { AuditQueries, pageOf } from '../../services/audit.js';
import type { HttpDeps } from '../deps.js';
import type { AdminGuards, AdminState } from '../middleware/admin.js';
import { exactRouter } from '../router.js';
import { AuditQuery, OIdParam } from '../schemas.js';
import { parse } from '../validation.js';

export function auditRouter({ readModels }: HttpDeps, guards: AdminGuards) {
  const router = exactRouter<AdminState>('/adm/audit');
  const allow = guards.read('audit:read');
  const audit = new AuditQueries(readModels);

  router.get('/points/:oId', ...allow, (ctx) => {
    const { oId } = parse(OIdParam, ctx.params);
    const paging = parse(AuditQuery, ctx.query);
    ctx.body = { code: 0, msg: 'success', data: pageOf(audit.points(oId), paging) };
  });

  router.get('/vip/:oId', ...allow, (ctx) => {
    const { oId } = parse(OIdParam, ctx.params);
    const paging = parse(AuditQuery, ctx.query);
    ctx.body = { code: 0, msg: 'success', data: pageOf(audit.vip(oId), paging) };
  });

  return router;
}
