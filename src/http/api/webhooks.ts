// An app's webhook endpoints (docs/api.md, "Webhooks"): register one (its signing secret is in
// that answer only), list, show, rotate the secret, disable, enable, delete, its latest attempts,
// and sending one event again. A key reaches its own app's endpoints only, unless it was created
// for every app (`--all-apps`); another app's endpoint answers 404, as none does.
import { WebhookAnswer, WebhookAttempts, WebhookCreated, WebhookDeletedAnswer, WebhookList, WebhookResent, WebhookRotated } from '../../contract/answers.js';
import { WebhookAttemptsQuery, WebhookCreateBody, WebhookEventParams, WebhookIdParam, WebhookListQuery } from '../../contract/requests.js';
import { ValidationError } from '../../domain/errors.js';
import { toSpecTimestamp } from '../../domain/time.js';
import { attemptViews, endpointView, type ChangeContext } from '../../services/webhooks.js';
import type { WebhookEndpointRecord } from '../../projections/webhooks.js';
import { actorOf, reaches, route, type Caller, type RouteContext, type RouteDeps } from '../route.js';

const REACH = "A key reaches its own app's endpoints only, unless it was created for every app (`--all-apps`); another app's endpoint answers 404.";
const SECRET_ONCE =
  'The signing secret is in this answer only: the service keeps it sealed and never shows it again. A retry with the same Idempotency-Key answers without it (rotate to get a new one).';

/** Who asks, the claim that fences the write, and which apps' endpoints the key reaches. */
function contextOf(ctx: RouteContext, caller: Caller): ChangeContext {
  const claim = ctx.state.writeClaim;
  return {
    work: ctx.state.work,
    by: { kind: 'app', ...actorOf(caller), ...(caller.allApps && { allApps: true as const }) },
    fence: claim && (() => claim.fence()),
    reaches: (appId) => reaches(caller, appId),
  };
}

const view = (endpoint: WebhookEndpointRecord, { readModels, clock }: RouteDeps) => endpointView(endpoint, readModels.webhooks.pendingCount(endpoint.endpointId), clock.now());

/** What an Idempotency-Key keeps of an answer that carries a secret: all of it but the secret. */
const withoutSecret = (body: unknown) => {
  const { data, ...rest } = body as { data: { secret?: string } };
  const { secret: _, ...kept } = data;
  return { ...rest, data: kept };
};

const access = { kind: 'apiKey', permission: 'webhooks:manage' } as const;

export const webhookRoutes = [
  route({
    method: 'post',
    path: '/adm/webhooks',
    tag: 'webhooks',
    summary: 'Register a webhook endpoint',
    description: `Events of the listed types are POSTed to \`url\`, signed (\`Bridge-Signature\`), at least once. ${SECRET_ONCE} ${REACH}`,
    access,
    body: WebhookCreateBody,
    ok: { description: 'Registered', json: WebhookCreated },
    errors: [409],
    keptAnswer: withoutSecret,
    async handle(ctx, { body: { url, events, description, appId }, caller }, deps) {
      const app = appId ?? caller.appId;
      if (!reaches(caller, app)) throw new ValidationError('appId: a key registers endpoints of its own app only, unless it was created for every app (--all-apps)');
      if (deps.readModels.apiKeys.appName(app) === undefined) throw new ValidationError(`appId: no app has the id ${app}`);
      const { endpoint, secret } = await deps.webhooks.register({ appId: app, url, events, description }, contextOf(ctx, caller));
      return { code: 0 as const, msg: 'success', data: { endpoint: view(endpoint, deps), secret } };
    },
  }),

  route({
    method: 'get',
    path: '/adm/webhooks',
    tag: 'webhooks',
    summary: "The app's webhook endpoints",
    description: REACH,
    access,
    query: WebhookListQuery,
    ok: { description: 'Oldest first', json: WebhookList },
    handle: (_ctx, { query: { appId }, caller }, deps) => {
      const app = caller.allApps ? appId : caller.appId;
      const items = deps.webhooks.list(app).filter((endpoint) => reaches(caller, endpoint.appId) && (appId === undefined || endpoint.appId === appId));
      return { code: 0 as const, msg: 'success', data: { items: items.map((endpoint) => view(endpoint, deps)) } };
    },
  }),

  route({
    method: 'get',
    path: '/adm/webhooks/:id',
    tag: 'webhooks',
    summary: 'One webhook endpoint',
    description: REACH,
    access,
    params: WebhookIdParam,
    ok: { description: 'The endpoint', json: WebhookAnswer },
    errors: [404],
    handle: (_ctx, { params: { id }, caller }, deps) => ({
      code: 0 as const,
      msg: 'success',
      data: view(
        deps.webhooks.get(id, (appId) => reaches(caller, appId)),
        deps,
      ),
    }),
  }),

  route({
    method: 'delete',
    path: '/adm/webhooks/:id',
    tag: 'webhooks',
    summary: 'Delete a webhook endpoint',
    description: `Nothing more is sent to it; its deliveries still to make are dropped, and its attempts stay in the log. ${REACH}`,
    access,
    params: WebhookIdParam,
    ok: { description: 'Deleted', json: WebhookDeletedAnswer },
    errors: [404],
    async handle(ctx, { params: { id }, caller }, { webhooks }) {
      await webhooks.remove(id, contextOf(ctx, caller));
      return { code: 0 as const, msg: 'success', data: { id, deleted: true as const } };
    },
  }),

  route({
    method: 'post',
    path: '/adm/webhooks/:id/rotate',
    tag: 'webhooks',
    summary: "Rotate an endpoint's signing secret",
    description: `A new secret signs from now on; the previous one signs too (a second \`v1=\`) until \`previousValidUntil\`. ${SECRET_ONCE} ${REACH}`,
    access,
    params: WebhookIdParam,
    ok: { description: 'Rotated', json: WebhookRotated },
    errors: [404],
    keptAnswer: withoutSecret,
    async handle(ctx, { params: { id }, caller }, deps) {
      const { endpoint, secret, previousUntil } = await deps.webhooks.rotate(id, contextOf(ctx, caller));
      return { code: 0 as const, msg: 'success', data: { endpoint: view(endpoint, deps), secret, previousValidUntil: toSpecTimestamp(previousUntil) } };
    },
  }),

  ...(
    [
      ['disable', 'Disable a webhook endpoint', 'Disabled', 'Nothing is sent to it while it is disabled; its deliveries wait (each until its retry period is over).'],
      ['enable', 'Enable a webhook endpoint', 'Enabled', 'Also after the service disabled it for failing for the whole retry period: the deliveries that waited go out.'],
    ] as const
  ).map(([action, summary, done, what]) =>
    route({
      method: 'post',
      path: `/adm/webhooks/:id/${action}`,
      tag: 'webhooks',
      summary,
      description: `${what} ${REACH}`,
      access,
      params: WebhookIdParam,
      ok: { description: done, json: WebhookAnswer },
      errors: [404],
      async handle(ctx, { params: { id }, caller }, deps) {
        return { code: 0 as const, msg: 'success', data: view(await deps.webhooks[action](id, contextOf(ctx, caller)), deps) };
      },
    }),
  ),

  route({
    method: 'get',
    path: '/adm/webhooks/:id/attempts',
    tag: 'webhooks',
    summary: "An endpoint's latest delivery attempts",
    description: `Every attempt: when, by which node, the receiver's status, how long it took, the first 1 KiB of its answer, and when the next attempt is due. ${REACH}`,
    access,
    params: WebhookIdParam,
    query: WebhookAttemptsQuery,
    ok: { description: 'Newest first', json: WebhookAttempts },
    errors: [404],
    handle: (_ctx, { params: { id }, query: { limit }, caller }, { webhooks }) => ({
      code: 0 as const,
      msg: 'success',
      data: { items: attemptViews(webhooks.attempts(id, limit, (appId) => reaches(caller, appId))) },
    }),
  }),

  route({
    method: 'post',
    path: '/adm/webhooks/:id/events/:eventId/resend',
    tag: 'webhooks',
    summary: 'Send an event to an endpoint again',
    description: `The event goes out again now (same id and body, a new signature), retried for a new retry period; its user's later events do not wait for it. 409 while an attempt of it is in progress or the endpoint is disabled. ${REACH}`,
    access,
    params: WebhookEventParams,
    ok: { description: 'Due now', json: WebhookResent },
    errors: [404],
    async handle(ctx, { params: { id, eventId }, caller }, { webhooks }) {
      const { deliveryId } = await webhooks.resend(id, eventId, contextOf(ctx, caller));
      return { code: 0 as const, msg: 'success', data: { eventId, deliveryId } };
    },
  }),
];
