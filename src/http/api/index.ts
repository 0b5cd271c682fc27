// Every endpoint of the service, in one list: the koa routes and the OpenAPI document are both
// built from it.
import type { ApiSettings, Route } from '../route.js';
import { auditRoutes } from './audit.js';
import { clientRoutes } from './clients.js';
import { messageRoutes } from './message.js';
import { metaRoutes } from './meta.js';
import { operationRoutes } from './operations.js';
import { platformRoutes } from './platform.js';
import { presenceRoutes } from './presence.js';
import { realtimeRoutes } from './realtime.js';
import { signInRoutes } from './signIn.js';
import { vipRoutes } from './vip.js';
import { webhookRoutes } from './webhooks.js';

export function apiRoutes(settings: ApiSettings): Route[] {
  return [
    ...platformRoutes,
    ...vipRoutes,
    ...messageRoutes(settings),
    ...clientRoutes,
    ...presenceRoutes,
    ...operationRoutes,
    ...auditRoutes,
    ...webhookRoutes,
    ...realtimeRoutes(settings),
    ...signInRoutes(settings),
    ...metaRoutes,
  ];
}
