// Webhook endpoints, and the outbox: the deliveries still to make, derived from the log. Each
// event an endpoint subscribes to (a sign-in, a disconnect, a push that reached signed-in
// clients, an operation's outcome) becomes one
// delivery per enabled endpoint that wants it, named by the event's log position and the
// endpoint, so every node derives the same deliveries with the same ids, after any restart. A
// delivery stays here until its stream records its success or that it was given up. The latest
// attempts of each endpoint are kept for the console and the API; all of them stay in the log.
import { ATTEMPTS_KEPT, webhookDecider, webhookBody, webhookDeliveryId, webhookEventId, type WebhookState } from '../domain/webhook.js';
import type { OperationRequested, WebhookEventType, WebhookPayload } from '../domain/events.js';
import { OPERATION_OUTCOME_TYPES, OPERATION_REQUESTED_TYPES } from '../domain/operation.js';
import type { RecordedEvent } from '../store/port.js';
import { requestIdOf } from '../system/eventMetadata.js';
import type { ClientsReadModel } from './clients.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';
import { refill } from './snapshotState.js';
import type { UsersReadModel } from './users.js';

export type WebhookEndpointRecord = Extract<WebhookState, { exists: true }> & {
  /** Revision of the endpoint's stream: the expected revision of its next change. */
  revision: number;
  /** When an attempt last succeeded, and when one last failed (with why). */
  lastDelivered?: string;
  lastFailed?: { at: string; why: string };
};

/** A delivery not yet made nor given up. */
export interface PendingDelivery {
  deliveryId: string;
  endpointId: string;
  payload: WebhookPayload;
  /** When the retry period began: the event's time in the log, or the resend's. */
  since: string;
  /** Revision of the delivery's stream (-1: nothing recorded yet): the next attempt expects it. */
  revision: number;
  /** Attempts recorded so far. */
  attempts: number;
  /** Failed attempts since `since`: the backoff grows with them. */
  failures: number;
  /** The next attempt may start at this time. */
  dueAt: string;
  /** The attempt recorded as started and not ended: on which node, and when the log recorded it. */
  open?: { attempt: number; node: string; recorded: string };
}

export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  type: WebhookEventType;
  attempt: number;
  node: string;
  started: string;
  ended?: { delivered: boolean; status?: number; error?: string; response?: string; durationMs: number; retryAt?: string; at: string };
}

const OPERATION_TYPES: readonly WebhookEventType[] = ['operation.outcome_known', 'operation.outcome_unknown', 'operation.resolved'];

/** The kind of an operation as webhooks name it. */
const OPERATION_KINDS: Record<OperationRequested['type'], string> = {
  PointsEditRequested: 'points.edit',
  MedalGiveRequested: 'medal.give',
  MedalRemoveRequested: 'medal.remove',
  ItemsEditRequested: 'items.edit',
};

interface TrackedOperation {
  appId: string;
  operationId: string;
  kind: string;
  oId: string;
  userId: string;
}

/** What a snapshot keeps of the webhooks read model. */
interface WebhooksState {
  endpointsById: Map<string, WebhookEndpointRecord>;
  pendingById: Map<string, PendingDelivery>;
  queues: Map<string, string[]>;
  attemptsByEndpoint: Map<string, AttemptRecord[]>;
  signedIn: Map<string, { userId: string; oId: string }>;
  operations: Map<string, TrackedOperation>;
}

export class WebhooksReadModel implements Projection {
  readonly name = 'webhooks';
  readonly version = 2;
  readonly handles = [
    'WebhookRegistered',
    'WebhookSecretRotated',
    'WebhookDisabled',
    'WebhookEnabled',
    'WebhookDeleted',
    'WebhookAttemptStarted',
    'WebhookAttemptFinished',
    'WebhookResendRequested',
    'ClientConnected',
    'ClientSignedIn',
    'ClientDisconnected',
    'MessagePushed',
    ...OPERATION_REQUESTED_TYPES,
    ...OPERATION_OUTCOME_TYPES,
  ] as const;

  private readonly endpointsById = new Map<string, WebhookEndpointRecord>();
  private readonly pendingById = new Map<string, PendingDelivery>();
  /** Per endpoint and order key, the pending deliveries in log order: only the first may be sent. */
  private readonly queues = new Map<string, string[]>();
  private readonly attemptsByEndpoint = new Map<string, AttemptRecord[]>();
  /** Signed-in clients and their user, for the disconnect that follows. */
  private readonly signedIn = new Map<string, { userId: string; oId: string }>();
  /** Operations of apps that hear of operations, until their outcome is final. */
  private readonly operations = new Map<string, TrackedOperation>();

  constructor(
    private readonly users: Pick<UsersReadModel, 'byUserId' | 'byOid'>,
    /** Who has signed-in clients open, as the log says at the event being applied. */
    private readonly clients: Pick<ClientsReadModel, 'isOnline'>,
  ) {}

  snapshotState(): WebhooksState {
    const { endpointsById, pendingById, queues, attemptsByEndpoint, signedIn, operations } = this;
    return { endpointsById, pendingById, queues, attemptsByEndpoint, signedIn, operations };
  }

  restoreState(state: WebhooksState): boolean {
    refill(this.endpointsById, state.endpointsById);
    refill(this.pendingById, state.pendingById);
    refill(this.queues, state.queues);
    refill(this.attemptsByEndpoint, state.attemptsByEndpoint);
    refill(this.signedIn, state.signedIn);
    refill(this.operations, state.operations);
    return true;
  }

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    switch (event.type) {
      case 'WebhookRegistered':
      case 'WebhookSecretRotated':
      case 'WebhookDisabled':
      case 'WebhookEnabled':
      case 'WebhookDeleted':
        this.applyEndpoint(recorded);
        return;
      case 'WebhookAttemptStarted': {
        const { deliveryId, endpointId, attempt, node, payload } = event.data;
        const pending = this.pendingById.get(deliveryId);
        if (pending) Object.assign(pending, { revision: recorded.revision, attempts: attempt, open: { attempt, node, recorded: recorded.created } });
        const sent = payload ?? pending?.payload;
        if (sent) this.keepAttempt(endpointId, { deliveryId, endpointId, eventId: sent.eventId, type: sent.type, attempt, node, started: recorded.created });
        return;
      }
      case 'WebhookAttemptFinished': {
        const { deliveryId, endpointId, attempt, delivered, status, error, response, durationMs, retryAt, at } = event.data;
        const kept = this.attemptsByEndpoint.get(endpointId)?.findLast((a) => a.deliveryId === deliveryId && a.attempt === attempt);
        if (kept)
          kept.ended = { delivered, ...(status !== undefined && { status }), ...(error && { error }), ...(response && { response }), durationMs, ...(retryAt && { retryAt }), at };
        const endpoint = this.endpointsById.get(endpointId);
        if (endpoint && delivered) endpoint.lastDelivered = at;
        if (endpoint && !delivered) endpoint.lastFailed = { at, why: error ?? `HTTP ${status}` };
        const pending = this.pendingById.get(deliveryId);
        if (!pending) return;
        if (delivered || retryAt === undefined) {
          this.settle(pending);
          return;
        }
        const { open: _, ...rest } = pending;
        this.pendingById.set(deliveryId, { ...rest, revision: recorded.revision, failures: pending.failures + 1, dueAt: retryAt });
        return;
      }
      case 'WebhookResendRequested': {
        const { deliveryId, endpointId, payload, attempts, at } = event.data;
        if (!this.endpointsById.has(endpointId)) return;
        const before = this.pendingById.get(deliveryId);
        if (before) this.settle(before);
        this.pendingById.set(deliveryId, { deliveryId, endpointId, payload, since: at, revision: recorded.revision, attempts, failures: 0, dueAt: at });
        return;
      }
      case 'ClientConnected': {
        const session = event.data.session;
        if (!session) return;
        this.signedIn.set(event.data.clientId, { userId: session.userId, oId: session.oId });
        this.dispatch(recorded, 'client.signed_in', undefined, userOrder(session.userId), { clientId: event.data.clientId, user: this.userOf(session.userId, session.oId) });
        return;
      }
      case 'ClientSignedIn': {
        const { clientId, userId, oId } = event.data;
        this.signedIn.set(clientId, { userId, oId });
        this.dispatch(recorded, 'client.signed_in', undefined, userOrder(userId), { clientId, user: this.userOf(userId, oId) });
        return;
      }
      case 'ClientDisconnected': {
        const { clientId, reason } = event.data;
        const user = this.signedIn.get(clientId);
        // Anonymous connections are nobody's players: they cause no delivery (nor any write).
        if (!user) return;
        this.signedIn.delete(clientId);
        this.dispatch(recorded, 'client.disconnected', undefined, userOrder(user.userId), { clientId, user: this.userOf(user.userId, user.oId), reason });
        return;
      }
      case 'MessagePushed': {
        const { appId, messageId, name, oIds, userIds } = event.data;
        if (!this.hears(appId, 'message.delivered')) return;
        // The ids as the push gave them, like its answer's `online`: those whose user has a
        // signed-in client open at the push's place in the log, to which each node writes it.
        const online = (userId: string | undefined) => userId !== undefined && this.clients.isOnline(userId);
        const delivered = { oIds: oIds.filter((oId) => online(this.users.byOid(oId)?.id)), userIds: userIds.filter((userId) => online(userId)) };
        if (delivered.oIds.length + delivered.userIds.length === 0) return;
        const requestId = requestIdOf(recorded.metadata);
        // It names many users: it keeps no user's order (its id is its place in the log).
        this.dispatch(recorded, 'message.delivered', appId, undefined, { messageId, name, ...(requestId !== undefined && { requestId }), ...delivered });
        return;
      }
      case 'PointsEditRequested':
      case 'MedalGiveRequested':
      case 'MedalRemoveRequested':
      case 'ItemsEditRequested': {
        const { operationId, appId, oId, userId } = event.data;
        if (this.hearsOfOperations(appId)) this.operations.set(operationId, { appId, operationId, kind: OPERATION_KINDS[event.type], oId, userId });
        return;
      }
      case 'OperationApplied':
      case 'OperationRejected':
      case 'OperationFailed': {
        const operation = this.operations.get(event.data.operationId);
        if (!operation) return;
        this.operations.delete(operation.operationId);
        const status = event.type === 'OperationApplied' ? 'applied' : event.type === 'OperationRejected' ? 'rejected' : 'failed';
        const detail = 'message' in event.data ? event.data.message : event.data.reason;
        this.dispatchOperation(recorded, 'operation.outcome_known', operation, { status, detail });
        return;
      }
      case 'OperationOutcomeUnknown': {
        const operation = this.operations.get(event.data.operationId);
        if (operation) this.dispatchOperation(recorded, 'operation.outcome_unknown', operation, { reason: event.data.reason });
        return;
      }
      case 'OperationResolved': {
        const operation = this.operations.get(event.data.operationId);
        if (!operation) return;
        this.operations.delete(operation.operationId);
        this.dispatchOperation(recorded, 'operation.resolved', operation, { applied: event.data.applied, note: event.data.note });
        return;
      }
    }
  }

  endpoint(endpointId: string): WebhookEndpointRecord | undefined {
    return this.endpointsById.get(endpointId);
  }

  /** The endpoint's stream as handleCommand takes it (undefined: not known here). */
  known(endpointId: string): { state: WebhookState; revision: number } | undefined {
    const record = this.endpointsById.get(endpointId);
    if (!record) return undefined;
    const { revision, lastDelivered: _d, lastFailed: _f, ...state } = record;
    return { state, revision };
  }

  /** Endpoints (of one app, or of every app), oldest first. */
  endpoints(appId?: string): WebhookEndpointRecord[] {
    return [...this.endpointsById.values()].filter((e) => appId === undefined || e.appId === appId);
  }

  /** Every delivery still to make. */
  pending(): IterableIterator<PendingDelivery> {
    return this.pendingById.values();
  }

  /** Deliveries still to make, to every endpoint. */
  pendingTotal(): number {
    return this.pendingById.size;
  }

  pendingCount(endpointId: string): number {
    let count = 0;
    for (const delivery of this.pendingById.values()) if (delivery.endpointId === endpointId) count++;
    return count;
  }

  /** Whether no earlier delivery of the same order key to the same endpoint is still to make. */
  isFirstInOrder(delivery: PendingDelivery): boolean {
    const key = delivery.payload.orderKey;
    return key === undefined || this.queues.get(queueOf(delivery.endpointId, key))?.[0] === delivery.deliveryId;
  }

  /** The endpoint's latest attempts, newest first. */
  attempts(endpointId: string, limit = ATTEMPTS_KEPT): AttemptRecord[] {
    return (this.attemptsByEndpoint.get(endpointId) ?? []).slice(-limit).reverse();
  }

  private applyEndpoint(recorded: RecordedEvent): void {
    const event = recorded as unknown as RecordedEvent & { data: { endpointId: string } } & Parameters<typeof webhookDecider.evolve>[1];
    const { endpointId } = event.data;
    if (event.type === 'WebhookDeleted') {
      this.endpointsById.delete(endpointId);
      this.attemptsByEndpoint.delete(endpointId);
      for (const delivery of [...this.pendingById.values()]) if (delivery.endpointId === endpointId) this.settle(delivery);
      return;
    }
    const before = this.endpointsById.get(endpointId);
    const after = webhookDecider.evolve(before ?? webhookDecider.initialState(), event);
    if (!after.exists) return;
    const kept = before ? { ...(before.lastDelivered && { lastDelivered: before.lastDelivered }), ...(before.lastFailed && { lastFailed: before.lastFailed }) } : {};
    this.endpointsById.set(endpointId, { ...after, ...kept, revision: recorded.revision });
  }

  private hearsOfOperations(appId: string): boolean {
    return OPERATION_TYPES.some((type) => this.hears(appId, type));
  }

  /** Whether an endpoint of the app (enabled or not: an operation's events come later) wants events of this type. */
  private hears(appId: string, type: WebhookEventType): boolean {
    for (const endpoint of this.endpointsById.values()) if (endpoint.appId === appId && endpoint.events.includes(type)) return true;
    return false;
  }

  private userOf(userId: string, oId: string) {
    const user = this.users.byUserId(userId);
    return user ? { id: userId, oId, name: user.name, nickname: user.nickname, avatar: user.avatar } : { id: userId, oId };
  }

  private dispatchOperation(recorded: RecordedEvent, type: WebhookEventType, operation: TrackedOperation, outcome: Record<string, unknown>): void {
    const { appId, operationId, kind, oId, userId } = operation;
    this.dispatch(recorded, type, appId, userOrder(userId), { operationId, kind, oId, userId, ...outcome });
  }

  /**
   * One delivery per enabled endpoint that wants `type` (of `appId`, when the event is one app's).
   * Deliveries with the same `orderKey` to an endpoint go one after another; without one, at any time.
   */
  private dispatch(recorded: RecordedEvent, type: WebhookEventType, appId: string | undefined, orderKey: string | undefined, data: Record<string, unknown>): void {
    for (const endpoint of this.endpointsById.values()) {
      if (endpoint.status !== 'enabled' || !endpoint.events.includes(type) || (appId !== undefined && endpoint.appId !== appId)) continue;
      const eventId = webhookEventId(recorded.position);
      const deliveryId = webhookDeliveryId(endpoint.endpointId, recorded.position);
      const body = webhookBody({ id: eventId, type, created: recorded.created, app: endpoint.appId, data });
      this.pendingById.set(deliveryId, {
        deliveryId,
        endpointId: endpoint.endpointId,
        payload: { eventId, type, body, ...(orderKey !== undefined && { orderKey }) },
        since: recorded.created,
        revision: -1,
        attempts: 0,
        failures: 0,
        dueAt: recorded.created,
      });
      if (orderKey === undefined) continue;
      const queue = queueOf(endpoint.endpointId, orderKey);
      const waiting = this.queues.get(queue);
      if (waiting) waiting.push(deliveryId);
      else this.queues.set(queue, [deliveryId]);
    }
  }

  /** The delivery is made or given up: it leaves the outbox, and the next of its order goes first. */
  private settle(delivery: PendingDelivery): void {
    this.pendingById.delete(delivery.deliveryId);
    const key = delivery.payload.orderKey;
    if (key === undefined) return;
    const queue = queueOf(delivery.endpointId, key);
    const waiting = this.queues.get(queue);
    if (!waiting) return;
    const index = waiting.indexOf(delivery.deliveryId);
    if (index >= 0) waiting.splice(index, 1);
    if (waiting.length === 0) this.queues.delete(queue);
  }

  private keepAttempt(endpointId: string, attempt: AttemptRecord): void {
    if (!this.endpointsById.has(endpointId)) return;
    const kept = this.attemptsByEndpoint.get(endpointId);
    if (!kept) {
      this.attemptsByEndpoint.set(endpointId, [attempt]);
      return;
    }
    kept.push(attempt);
    if (kept.length > ATTEMPTS_KEPT) kept.splice(0, kept.length - ATTEMPTS_KEPT);
  }
}

const queueOf = (endpointId: string, orderKey: string) => `${endpointId}\n${orderKey}`;

/** One user's events to an endpoint go in log order. */
const userOrder = (userId: string) => `user:${userId}`;
