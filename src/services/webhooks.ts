// Managing an app's webhook endpoints: register (the signing secret is answered once and kept
// only sealed), rotate the secret, disable, enable, delete, list the latest attempts, and send a
// delivery again. Every change is an event on the endpoint's stream (or the delivery's).
import type * as v from 'valibot';
import type { WebhookSettings } from '../config.js';
import type { WebhookAttempt, WebhookEndpoint } from '../contract/answers.js';
import { toSpecTimestamp } from '../domain/time.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import { streams, type Resolver, type WebhookEventType } from '../domain/events.js';
import { deliveryDecider, positionOfEventId, webhookDecider, webhookDeliveryId, webhookUrlProblem, type WebhookCommand } from '../domain/webhook.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { AttemptRecord, WebhookEndpointRecord, WebhooksReadModel } from '../projections/webhooks.js';
import type { AlongsideWrite, EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import { newRecordId } from '../system/ids.js';
import type { SecretBox } from '../system/sealed.js';
import { handleCommand } from './commandHandler.js';
import type { WorkContext } from '../system/workContext.js';
import { refusedHostProblem } from './webhookAddresses.js';
import { newWebhookSecret } from './webhookSignature.js';

/** The key every endpoint secret is sealed under is derived for this purpose. */
export const WEBHOOK_SECRET_PURPOSE = 'webhook-endpoint-secrets';

export interface NewWebhook {
  appId: string;
  url: string;
  events: WebhookEventType[];
  description?: string | undefined;
}

/** Who asks, and the Idempotency-Key claim that fences the write, when there is one. */
export interface ChangeContext {
  /** Who the change is made for: what it records is stamped with it. */
  work: WorkContext;
  by?: Resolver | undefined;
  fence?: (() => AlongsideWrite) | undefined;
  /** Whether the caller may see this app's endpoints (another app's answers 404). */
  reaches?: ((appId: string) => boolean) | undefined;
}

export class WebhookService {
  constructor(
    private readonly deps: {
      store: EventStore;
      runner: ProjectionRunner;
      webhooks: WebhooksReadModel;
      clock: Clock;
      box: SecretBox;
      settings: Pick<WebhookSettings, 'allowPrivate' | 'maxEndpointsPerApp' | 'rotationOverlapMs'>;
    },
  ) {}

  /** Registers an endpoint; answers its record and its secret, which is never shown again. */
  async register(input: NewWebhook, context: ChangeContext): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
    const problem = webhookUrlProblem(input.url) ?? (this.deps.settings.allowPrivate ? undefined : refusedHostProblem(new URL(input.url).hostname));
    if (problem) throw new ValidationError(`url: ${problem}`);
    const { maxEndpointsPerApp } = this.deps.settings;
    if (this.deps.webhooks.endpoints(input.appId).length >= maxEndpointsPerApp) {
      throw new ConflictError(`App ${input.appId} has ${maxEndpointsPerApp} webhook endpoints already (WEBHOOKS_MAX_PER_APP): delete one first`);
    }
    const endpointId = newRecordId();
    const secret = newWebhookSecret();
    await this.execute(
      {
        type: 'RegisterWebhook',
        endpointId,
        appId: input.appId,
        url: input.url,
        events: input.events,
        description: input.description ?? '',
        secret: this.deps.box.seal(secret, endpointId),
        at: this.deps.clock.now(),
        by: context.by,
      },
      context,
    );
    return { endpoint: this.get(endpointId), secret };
  }

  /** A new secret signs from now on; the previous one signs too, second, for the overlap. */
  async rotate(endpointId: string, context: ChangeContext): Promise<{ endpoint: WebhookEndpointRecord; secret: string; previousUntil: string }> {
    this.get(endpointId, context.reaches);
    const secret = newWebhookSecret();
    const at = this.deps.clock.now();
    const previousUntil = new Date(Date.parse(at) + this.deps.settings.rotationOverlapMs).toISOString();
    const sealed = this.deps.box.seal(secret, endpointId);
    await this.execute({ type: 'RotateWebhookSecret', endpointId, secret: sealed, previousUntil, at, by: context.by }, context);
    return { endpoint: this.get(endpointId), secret, previousUntil };
  }

  async disable(endpointId: string, context: ChangeContext): Promise<WebhookEndpointRecord> {
    this.get(endpointId, context.reaches);
    await this.execute({ type: 'DisableWebhook', endpointId, reason: 'requested', detail: '', at: this.deps.clock.now(), by: context.by }, context);
    return this.get(endpointId);
  }

  async enable(endpointId: string, context: ChangeContext): Promise<WebhookEndpointRecord> {
    this.get(endpointId, context.reaches);
    await this.execute({ type: 'EnableWebhook', endpointId, at: this.deps.clock.now(), by: context.by }, context);
    return this.get(endpointId);
  }

  /** Deletes it for good: its pending deliveries are dropped, its attempts stay in the log. */
  async remove(endpointId: string, context: ChangeContext): Promise<void> {
    this.get(endpointId, context.reaches);
    await this.execute({ type: 'DeleteWebhook', endpointId, at: this.deps.clock.now(), by: context.by }, context);
  }

  /** The endpoint, when it exists and the caller reaches its app (else 404, as for none). */
  get(endpointId: string, reaches: (appId: string) => boolean = () => true): WebhookEndpointRecord {
    const endpoint = this.deps.webhooks.endpoint(endpointId);
    if (!endpoint || !reaches(endpoint.appId)) throw new NotFoundError(`No webhook endpoint with id ${endpointId}`);
    return endpoint;
  }

  list(appId?: string): WebhookEndpointRecord[] {
    return this.deps.webhooks.endpoints(appId);
  }

  attempts(endpointId: string, limit: number, reaches?: (appId: string) => boolean): AttemptRecord[] {
    this.get(endpointId, reaches);
    return this.deps.webhooks.attempts(endpointId, limit);
  }

  /** Sends one event to the endpoint again, now, with a new retry period; its user's later events do not wait for it. */
  async resend(endpointId: string, eventId: string, context: ChangeContext): Promise<{ deliveryId: string }> {
    const endpoint = this.get(endpointId, context.reaches);
    if (endpoint.status !== 'enabled') throw new ConflictError(`Webhook endpoint ${endpointId} is disabled: enable it first`);
    const deliveryId = webhookDeliveryId(endpointId, positionOfEventId(eventId));
    const command = { type: 'RequestResend', deliveryId, endpointId, at: this.deps.clock.now(), by: context.by } as const;
    const fence = context.fence;
    const { position } = await handleCommand(context.work, this.deps.store, streams.webhookDelivery(deliveryId), deliveryDecider, command, { fence: fence && (() => fence()) });
    await this.deps.runner.waitForRecorded(position);
    return { deliveryId };
  }

  private async execute(command: WebhookCommand, context: ChangeContext): Promise<void> {
    const fence = context.fence;
    const known = this.deps.webhooks.known(command.endpointId);
    const { position } = await handleCommand(context.work, this.deps.store, streams.webhook(command.endpointId), webhookDecider, command, {
      known: known ?? { state: webhookDecider.initialState(), revision: -1 },
      fence: fence && (() => fence()),
    });
    await this.deps.runner.waitForRecorded(position);
  }
}

export type EndpointView = v.InferOutput<typeof WebhookEndpoint>;
export type AttemptView = v.InferOutput<typeof WebhookAttempt>;

/** An endpoint as the API, the CLI and the console show it: never its secret. */
export function endpointView(endpoint: WebhookEndpointRecord, pending: number, now: string): EndpointView {
  const { endpointId, appId, url, events, description, status, disabled, created, previous, lastDelivered, lastFailed } = endpoint;
  return {
    id: endpointId,
    appId,
    url,
    events,
    description,
    status: status === 'disabled' ? 'disabled' : 'enabled',
    ...(disabled && { disabled: { ...disabled, at: toSpecTimestamp(disabled.at) } }),
    created: toSpecTimestamp(created),
    ...(previous && previous.until > now && { previousSecretValidUntil: toSpecTimestamp(previous.until) }),
    ...(lastDelivered && { lastDelivered: toSpecTimestamp(lastDelivered) }),
    ...(lastFailed && { lastFailed: { at: toSpecTimestamp(lastFailed.at), why: lastFailed.why } }),
    pending,
  };
}

/** Attempts as shown, newest first: one without a result is `interrupted` once a later attempt of its delivery exists. */
export function attemptViews(attempts: readonly AttemptRecord[]): AttemptView[] {
  return attempts.map((attempt) => {
    const { deliveryId, eventId, type, node, started, ended } = attempt;
    const later = attempts.some((other) => other.deliveryId === deliveryId && other.attempt > attempt.attempt);
    const result = ended ? (ended.delivered ? 'delivered' : 'failed') : later ? 'interrupted' : 'sending';
    return {
      eventId,
      type,
      deliveryId,
      attempt: attempt.attempt,
      node,
      started: toSpecTimestamp(started),
      result,
      ...(ended && {
        ...(ended.status !== undefined && { status: ended.status }),
        ...(ended.error && { error: ended.error }),
        ...(ended.response && { response: ended.response }),
        durationMs: ended.durationMs,
        ...(ended.retryAt && { retryAt: toSpecTimestamp(ended.retryAt) }),
        ended: toSpecTimestamp(ended.at),
      }),
    };
  });
}
