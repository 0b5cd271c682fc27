// Webhooks: every app's endpoints (with the notice of those disabled for failing), a new one for
// an app (its secret in that answer only), an endpoint's latest attempts, sending an event again,
// and disable, enable, rotate, delete — each recorded with the operator as `by`.
import {
  WebhookActionParams,
  WebhookCreateBody,
  WebhookEventParams,
  WebhookIdParam,
  type WebhookChanged,
  type WebhookDetail,
  type WebhookPage,
  type WebhookResentView,
} from '../../contract/console.js';
import { invalid } from '../../http/validation.js';
import type { WebhookEndpointRecord } from '../../projections/webhooks.js';
import { attemptViews, endpointView } from '../../services/webhooks.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleOperator } from '../operator.js';
import { consoleRoute } from './consoleRoute.js';

/** How many of an endpoint's latest attempts the console shows. */
const ATTEMPTS_SHOWN = 100;

const view = (endpoint: WebhookEndpointRecord, { readModels, clock }: ConsoleDeps) => endpointView(endpoint, readModels.webhooks.pendingCount(endpoint.endpointId), clock.now());

export const webhookEndpoints = [
  consoleRoute({
    method: 'get',
    path: '/console/api/webhooks',
    handle(_ctx, _input, deps): WebhookPage {
      const apps = new Map<string, string>();
      for (const key of deps.readModels.apiKeys.list()) if (!apps.has(key.appId)) apps.set(key.appId, key.app);
      return {
        apps: [...apps].map(([appId, app]) => ({ appId, app })).sort((a, b) => a.appId.localeCompare(b.appId)),
        endpoints: deps.webhooks.list().map((endpoint) => view(endpoint, deps)),
      };
    },
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/webhooks',
    body: WebhookCreateBody,
    async handle(ctx, { body: { appId, url, events, description } }, deps): Promise<WebhookChanged> {
      if (!appId) throw invalid('appId', 'is required (the app the endpoint is for)');
      if (deps.readModels.apiKeys.appName(appId) === undefined) throw invalid('appId', `no app has the id ${appId}`);
      const { endpoint, secret } = await deps.webhooks.register({ appId, url, events, description }, { work: ctx.state.work, by: consoleOperator(ctx.state.operator.oId) });
      return { endpoint: view(endpoint, deps), secret };
    },
  }),
  consoleRoute({
    method: 'get',
    path: '/console/api/webhooks/:id',
    params: WebhookIdParam,
    handle: (_ctx, { params: { id } }, deps): WebhookDetail => ({
      endpoint: view(deps.webhooks.get(id), deps),
      attempts: attemptViews(deps.webhooks.attempts(id, ATTEMPTS_SHOWN)),
    }),
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/webhooks/:id/:action',
    params: WebhookActionParams,
    async handle(ctx, { params: { id, action } }, deps): Promise<WebhookChanged> {
      const context = { work: ctx.state.work, by: consoleOperator(ctx.state.operator.oId) };
      switch (action) {
        case 'delete':
          await deps.webhooks.remove(id, context);
          return { deleted: true };
        case 'rotate': {
          const { endpoint, secret } = await deps.webhooks.rotate(id, context);
          return { endpoint: view(endpoint, deps), secret };
        }
        default:
          return { endpoint: view(await deps.webhooks[action](id, context), deps) };
      }
    },
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/webhooks/:id/events/:eventId/resend',
    params: WebhookEventParams,
    async handle(ctx, { params: { id, eventId } }, { webhooks }): Promise<WebhookResentView> {
      const { deliveryId } = await webhooks.resend(id, eventId, { work: ctx.state.work, by: consoleOperator(ctx.state.operator.oId) });
      return { eventId, deliveryId };
    },
  }),
];
