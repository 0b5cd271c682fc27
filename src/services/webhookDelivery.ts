// Makes the deliveries the outbox holds (src/projections/webhooks.ts), on one node at a time: the
// node that `leads` (the live node with the least NODE_ID) sends, the others only fold the log.
// Each attempt is recorded before it is sent, on the delivery's stream at the revision this node
// knows, so two nodes that both believe they lead (for a moment, as a node joins or leaves)
// cannot both record, and so send, the same attempt: the second append fails and sends nothing.
// Its result is recorded after, at the revision its start left. An attempt recorded without a
// result belongs to a node that died or froze while sending: once that node is gone, or the
// attempt is older than the timeout and a margin, the leader sends the event again as a new
// attempt (at least once; every send has its own attempt record). Nothing here blocks a request:
// deliveries follow the log.
import type { Subscription } from 'rxjs';
import type { WebhookSettings } from '../config.js';
import { ConcurrencyError } from '../domain/errors.js';
import { streams, type WebhookAttemptFinished, type WebhookAttemptStarted } from '../domain/events.js';
import { nextAttemptAt, webhookDecider } from '../domain/webhook.js';
import type { Logger } from '../log.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { PendingDelivery, WebhookEndpointRecord, WebhooksReadModel } from '../projections/webhooks.js';
import type { EventStore } from '../store/port.js';
import type { Clock } from '../system/clock.js';
import { WorkContext } from '../system/workContext.js';
import type { SecretBox } from '../system/sealed.js';
import { handleCommand, stamped } from './commandHandler.js';
import type { ClockReading } from './logClock.js';
import type { AttemptResult, WebhookSender } from './webhookSender.js';
import { SIGNATURE_HEADER, signatureHeader } from './webhookSignature.js';

/** How often the leader looks for due deliveries when nothing new arrives. */
const TICK_MS = 1000;
/** An attempt recorded without a result is someone else's to finish for this long past the timeout. */
const ABANDON_MARGIN_MS = 5000;
/** Event types after which there may be something to send at once. */
const WAKING_TYPES = new Set([
  'ClientConnected',
  'ClientSignedIn',
  'ClientDisconnected',
  'MessagePushed',
  'OperationApplied',
  'OperationRejected',
  'OperationFailed',
  'OperationOutcomeUnknown',
  'OperationResolved',
  'WebhookResendRequested',
  'WebhookEnabled',
  'WebhookAttemptFinished',
  'WebhookRegistered',
]);

export interface WebhookDelivererDeps {
  store: EventStore;
  runner: Pick<ProjectionRunner, 'applied$' | 'waitForRecorded'>;
  webhooks: WebhooksReadModel;
  clock: Clock;
  clockReading: () => Pick<ClockReading, 'trusted' | 'liveNodes'>;
  nodeId: string;
  /** Whether this node is the one that delivers now. */
  leads: () => boolean;
  sender: Pick<WebhookSender, 'send'>;
  box: SecretBox;
  settings: Pick<WebhookSettings, 'timeoutMs' | 'retry' | 'maxInFlight' | 'maxInFlightPerEndpoint'>;
  log: Logger;
  /** [0, 1): the backoff's jitter (tests fix it). */
  random?: () => number;
  /** Told the result of each attempt this node made (webhook_attempts_total). */
  onAttempt?: (result: 'delivered' | 'failed') => void;
}

/** The secrets that sign for an endpoint now, the newest first; undefined when one cannot be opened. */
export function signingSecrets(box: SecretBox, endpoint: Pick<WebhookEndpointRecord, 'endpointId' | 'secret' | 'previous'>, now: string): string[] | undefined {
  const current = box.open(endpoint.secret, endpoint.endpointId);
  if (current === undefined) return undefined;
  const previous = endpoint.previous && endpoint.previous.until > now ? box.open(endpoint.previous.secret, endpoint.endpointId) : undefined;
  return previous === undefined ? [current] : [current, previous];
}

export class WebhookDeliverer {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private woken = false;
  private nudges: Subscription | undefined;
  /** Endpoints whose secret this node cannot open (another SESSION_SECRET): said once each. */
  private readonly unreadable = new Set<string>();

  /** Deliveries are the node's own work: what they record names the node. */
  private readonly work: WorkContext;

  constructor(private readonly deps: WebhookDelivererDeps) {
    this.work = WorkContext.ofNode(deps.nodeId);
  }

  start(): void {
    this.nudges = this.deps.runner.applied$.subscribe((event) => {
      if (WAKING_TYPES.has(event.type)) this.wake();
    });
    this.schedule(0);
  }

  /** Stops sending: attempts in flight are abandoned unrecorded, and the next leader sends them again. */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    this.nudges?.unsubscribe();
    await Promise.all(this.inFlight.values());
  }

  /** Attempts this node is making now. */
  get sending(): number {
    return this.inFlight.size;
  }

  /** Starts every delivery that is due now and may go (tests call it; the timer does too). */
  runOnce(): void {
    const { clock, clockReading, webhooks, leads, settings } = this.deps;
    if (this.stopping.signal.aborted || !clockReading().trusted || !leads()) return;
    const now = clock.now();
    const nowMs = Date.parse(now);
    const live = clockReading().liveNodes;
    for (const delivery of webhooks.pending()) {
      if (this.inFlight.size >= settings.maxInFlight) return;
      if (this.inFlight.has(delivery.deliveryId) || Date.parse(delivery.dueAt) > nowMs) continue;
      const endpoint = webhooks.endpoint(delivery.endpointId);
      if (endpoint?.status !== 'enabled' || (this.perEndpoint.get(endpoint.endpointId) ?? 0) >= settings.maxInFlightPerEndpoint) continue;
      if (!webhooks.isFirstInOrder(delivery) || (delivery.open && !this.abandoned(delivery.open, nowMs, live))) continue;
      this.begin(delivery, endpoint, now);
    }
  }

  /** An attempt recorded without a result that nobody will finish: its node is gone, or it is long past its timeout. */
  private abandoned(open: NonNullable<PendingDelivery['open']>, nowMs: number, live: ReadonlySet<string>): boolean {
    // This node's own attempt that it does not hold is an earlier run's (a restart).
    if (open.node === this.deps.nodeId || !live.has(open.node)) return true;
    return nowMs - Date.parse(open.recorded) > this.deps.settings.timeoutMs + ABANDON_MARGIN_MS;
  }

  private begin(delivery: PendingDelivery, endpoint: WebhookEndpointRecord, now: string): void {
    const secrets = signingSecrets(this.deps.box, endpoint, now);
    if (!secrets) {
      if (!this.unreadable.has(endpoint.endpointId)) {
        this.unreadable.add(endpoint.endpointId);
        this.deps.log.error(
          { endpointId: endpoint.endpointId },
          "cannot open this webhook endpoint's secret: every node must run with the SESSION_SECRET it was registered under; nothing is sent to it from this node",
        );
      }
      return;
    }
    const endpointId = endpoint.endpointId;
    this.perEndpoint.set(endpointId, (this.perEndpoint.get(endpointId) ?? 0) + 1);
    const done = this.attempt(delivery, endpoint, secrets)
      .catch((error: unknown) => this.deps.log.error({ err: error, deliveryId: delivery.deliveryId }, 'a webhook attempt failed to be recorded; it is made again'))
      .finally(() => {
        this.inFlight.delete(delivery.deliveryId);
        const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
        if (left > 0) this.perEndpoint.set(endpointId, left);
        else this.perEndpoint.delete(endpointId);
        this.wake();
      });
    this.inFlight.set(delivery.deliveryId, done);
  }

  private async attempt(delivery: PendingDelivery, endpoint: WebhookEndpointRecord, secrets: string[]): Promise<void> {
    const { store, clock, nodeId, sender, runner, log } = this.deps;
    const stream = streams.webhookDelivery(delivery.deliveryId);
    const attempt = delivery.attempts + 1;
    const { deliveryId, endpointId, payload } = delivery;
    const started: WebhookAttemptStarted = {
      type: 'WebhookAttemptStarted',
      // The stream's first event says what the delivery sends (a resend's event says it otherwise).
      data: { deliveryId, endpointId, attempt, node: nodeId, at: clock.now(), ...(delivery.revision < 0 && { payload }) },
    };
    let revision: number;
    try {
      ({ nextExpectedRevision: revision } = await store.append(stream, stamped([started], this.work.metadataFor(stream)), {
        expectedRevision: delivery.revision < 0 ? 'no_stream' : delivery.revision,
      }));
    } catch (error) {
      // Another node recorded this attempt (or the delivery's end) first: it is theirs.
      if (error instanceof ConcurrencyError) return;
      throw error;
    }
    const timestamp = Math.floor(Date.parse(clock.now()) / 1000);
    const headers = { [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, payload.body), 'Bridge-Event-Id': payload.eventId, 'Bridge-Event-Type': payload.type };
    const result = await sender.send(endpoint.url, headers, payload.body, this.stopping.signal);
    // Stopped mid-attempt: recorded as started only, so the next leader sends it again.
    if (this.stopping.signal.aborted) return;
    this.deps.onAttempt?.(result.delivered ? 'delivered' : 'failed');
    const at = clock.now();
    const retryAt = result.delivered ? undefined : nextAttemptAt(this.deps.settings.retry, delivery.failures + 1, delivery.since, at, (this.deps.random ?? Math.random)());
    const finished: WebhookAttemptFinished = { type: 'WebhookAttemptFinished', data: { deliveryId, endpointId, attempt, ...result, ...(retryAt && { retryAt }), at } };
    let position: number;
    try {
      ({ position } = await store.append(stream, stamped([finished], this.work.metadataFor(stream)), { expectedRevision: revision }));
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      log.warn({ deliveryId, attempt }, 'a webhook attempt ended after another node had taken the delivery over; its result is not recorded');
      return;
    }
    await runner.waitForRecorded(position);
    if (!result.delivered && retryAt === undefined) await this.gaveUp(delivery, endpoint, result, at);
  }

  /**
   * A delivery was given up: when nothing reached the endpoint since that delivery's period
   * began, it has failed for the whole retry period, and is disabled.
   */
  private async gaveUp(delivery: PendingDelivery, endpoint: WebhookEndpointRecord, result: AttemptResult, at: string): Promise<void> {
    const { log, store, webhooks } = this.deps;
    log.warn({ deliveryId: delivery.deliveryId, endpointId: endpoint.endpointId }, 'a webhook delivery failed for its whole retry period and was given up');
    const current = webhooks.endpoint(endpoint.endpointId);
    if (current?.status !== 'enabled') return;
    if (current.lastDelivered !== undefined && Date.parse(current.lastDelivered) >= Date.parse(delivery.since)) return;
    const why = result.error ?? `HTTP ${result.status}`;
    const detail = `every attempt failed since ${delivery.since} (the last: ${why})`;
    const command = { type: 'DisableWebhook', endpointId: endpoint.endpointId, reason: 'failing', detail, at } as const;
    await handleCommand(this.work, store, streams.webhook(endpoint.endpointId), webhookDecider, command, { known: webhooks.known(endpoint.endpointId) });
    log.warn({ endpointId: endpoint.endpointId, appId: endpoint.appId }, 'a webhook endpoint that failed for its whole retry period is disabled: enable it once it answers again');
  }

  /** Looks again soon (coalesced): something may have become due. */
  private wake(): void {
    if (this.woken || this.stopping.signal.aborted) return;
    this.woken = true;
    setImmediate(() => {
      this.woken = false;
      this.tick();
    });
  }

  private tick(): void {
    this.runOnce();
    // A node that does not lead only looks again whether it leads now.
    this.schedule(this.deps.leads() ? this.untilNextDue() : TICK_MS);
  }

  private schedule(delayMs: number): void {
    if (this.stopping.signal.aborted) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), delayMs);
    this.timer.unref();
  }

  /** Until the next retry falls due, if sooner than the tick. */
  private untilNextDue(): number {
    const now = Date.parse(this.deps.clock.now());
    let wait = TICK_MS;
    for (const delivery of this.deps.webhooks.pending()) {
      const until = Date.parse(delivery.dueAt) - now;
      // Those due already and not started wait for something whose end wakes the deliverer.
      if (until > 0) wait = Math.min(wait, until);
    }
    return wait;
  }
}
