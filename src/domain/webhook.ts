// Webhooks (docs/api.md, "Webhooks"): an app's endpoint lives in `webhook-<endpointId>`
// (registered → disabled ⇄ enabled, secret rotations, deleted for good), and each event sent to
// it has a delivery stream `webhookdelivery-<deliveryId>` holding its attempts. Pure rules only:
// what a URL may be, what each change records, when the next attempt is due.
import type { Decider } from './decider.js';
import { ConflictError, NotFoundError, ValidationError } from './errors.js';
import {
  WEBHOOK_EVENT_TYPES,
  type Resolver,
  type WebhookDeliveryEvent,
  type WebhookEndpointEvent,
  type WebhookEventType,
  type WebhookPayload,
  type WebhookResendRequested,
} from './events.js';

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 200;
/** Attempts each node keeps in memory per endpoint, for the API and the console (the log keeps every one). */
export const ATTEMPTS_KEPT = 200;

export function isWebhookEventType(text: string): text is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(text);
}

/** A loopback host as a URL names it: `localhost` (and names under it), 127.0.0.0/8, `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '[::1]';
}

/**
 * What is wrong with an endpoint URL, if anything: https, or http to a loopback host (a receiver
 * in development); no credentials (they would be shown wherever the URL is), no fragment.
 */
export function webhookUrlProblem(text: string): string | undefined {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) return `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return 'must be https (http only to a loopback address, for development)';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.hash) return 'must not have a fragment (#…)';
  return undefined;
}

export type WebhookStatus = 'enabled' | 'disabled' | 'deleted';

export type WebhookState =
  | { exists: false }
  | {
      exists: true;
      endpointId: string;
      appId: string;
      url: string;
      events: WebhookEventType[];
      description: string;
      status: WebhookStatus;
      /** Why and when it was disabled, while it is. */
      disabled?: { reason: 'requested' | 'failing'; detail: string; at: string };
      /** The sealed signing secret, and the previous one while it still signs. */
      secret: string;
      previous?: { secret: string; until: string };
      created: string;
    };

type By = { by?: Resolver | undefined };
export type WebhookCommand =
  | ({ type: 'RegisterWebhook'; endpointId: string; appId: string; url: string; events: WebhookEventType[]; description: string; secret: string; at: string } & By)
  | ({ type: 'RotateWebhookSecret'; endpointId: string; secret: string; previousUntil: string; at: string } & By)
  | ({ type: 'DisableWebhook'; endpointId: string; reason: 'requested' | 'failing'; detail: string; at: string } & By)
  | ({ type: 'EnableWebhook'; endpointId: string; at: string } & By)
  | ({ type: 'DeleteWebhook'; endpointId: string; at: string } & By);

function existing(state: WebhookState, endpointId: string) {
  // A deleted endpoint is gone: nothing more can be done with it.
  if (!state.exists || state.status === 'deleted') throw new NotFoundError(`No webhook endpoint with id ${endpointId}`);
  return state;
}

const byOf = (by: Resolver | undefined) => (by ? { by } : {});

export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEndpointEvent> = {
  initialState: () => ({ exists: false }),

  decide(command, state) {
    const { endpointId, at } = command;
    switch (command.type) {
      case 'RegisterWebhook': {
        if (state.exists) throw new ConflictError(`Webhook endpoint ${endpointId} already exists`);
        const problem = webhookUrlProblem(command.url);
        if (problem) throw new ValidationError(`url: ${problem}`);
        if (command.events.length === 0) throw new ValidationError('events: must name at least one event type');
        const { appId, url, events, description, secret } = command;
        return [{ type: 'WebhookRegistered', data: { endpointId, appId, url, events: [...new Set(events)], description, secret, at, ...byOf(command.by) } }];
      }
      case 'RotateWebhookSecret':
        existing(state, endpointId);
        return [{ type: 'WebhookSecretRotated', data: { endpointId, secret: command.secret, previousUntil: command.previousUntil, at, ...byOf(command.by) } }];
      case 'DisableWebhook':
        // Asking twice is not an error, and the first reason stays (an operator's stays theirs).
        if (existing(state, endpointId).status === 'disabled') return [];
        return [{ type: 'WebhookDisabled', data: { endpointId, reason: command.reason, detail: command.detail, at, ...byOf(command.by) } }];
      case 'EnableWebhook':
        return existing(state, endpointId).status === 'enabled' ? [] : [{ type: 'WebhookEnabled', data: { endpointId, at, ...byOf(command.by) } }];
      case 'DeleteWebhook':
        existing(state, endpointId);
        return [{ type: 'WebhookDeleted', data: { endpointId, at, ...byOf(command.by) } }];
    }
  },

  evolve(state, event) {
    if (event.type === 'WebhookRegistered') {
      const { endpointId, appId, url, events, description, secret, at } = event.data;
      return { exists: true, endpointId, appId, url, events, description, secret, status: 'enabled', created: at };
    }
    if (!state.exists) return state;
    switch (event.type) {
      case 'WebhookSecretRotated':
        return { ...state, secret: event.data.secret, previous: { secret: state.secret, until: event.data.previousUntil } };
      case 'WebhookDisabled': {
        const { reason, detail, at } = event.data;
        return { ...state, status: 'disabled', disabled: { reason, detail, at } };
      }
      case 'WebhookEnabled': {
        const { disabled: _, ...rest } = state;
        return { ...rest, status: 'enabled' };
      }
      case 'WebhookDeleted':
        return { ...state, status: 'deleted' };
    }
  },
};

/** The id a receiver deduplicates on: one per log event, the same for every endpoint and attempt. */
export const webhookEventId = (position: number) => `evt_${position}`;
/** One event to one endpoint. */
export const webhookDeliveryId = (endpointId: string, position: number) => `${endpointId}-${position}`;
export const DELIVERY_ID = /^[a-z0-9]{15}-\d{1,15}$/;
export const EVENT_ID = /^evt_\d{1,15}$/;
/** The log position an event id names. */
export const positionOfEventId = (eventId: string) => Number(eventId.slice('evt_'.length));

/** The body of a webhook request: always these keys, in this order. */
export function webhookBody(event: { id: string; type: WebhookEventType; created: string; app: string; data: Record<string, unknown> }): string {
  const { id, type, created, app, data } = event;
  return JSON.stringify({ id, type, created, app, data });
}

/** A delivery as its stream tells it: what it sends, and whether an attempt is open. */
export interface DeliveryState {
  /** Attempts recorded (started), abandoned ones included. */
  attempts: number;
  /** The last attempt started and has no result yet. */
  open: boolean;
  payload?: WebhookPayload;
}

export type RequestResend = { type: 'RequestResend'; deliveryId: string; endpointId: string; at: string; by?: Resolver | undefined };

/** An attempt in progress must end first (it may still succeed); a delivery never attempted goes out anyway. */
export class ResendWhileSendingError extends ConflictError {
  constructor(deliveryId: string) {
    super(`Delivery ${deliveryId} has an attempt in progress; send it again once that attempt has ended`);
  }
}

export const deliveryDecider: Decider<DeliveryState, RequestResend, WebhookDeliveryEvent> = {
  initialState: () => ({ attempts: 0, open: false }),

  decide(command, state) {
    if (!state.payload) throw new NotFoundError(`Delivery ${command.deliveryId} has not been attempted yet: it goes out when due`);
    if (state.open) throw new ResendWhileSendingError(command.deliveryId);
    // A resent event is sent on its own: it holds back none of its user's later events.
    const { orderKey: _, ...payload } = state.payload;
    const { deliveryId, endpointId, at } = command;
    const data: WebhookResendRequested['data'] = { deliveryId, endpointId, payload, attempts: state.attempts, at, ...byOf(command.by) };
    return [{ type: 'WebhookResendRequested', data }];
  },

  evolve(state, event) {
    switch (event.type) {
      case 'WebhookAttemptStarted':
        return { attempts: event.data.attempt, open: true, payload: state.payload ?? event.data.payload };
      case 'WebhookAttemptFinished':
        return { ...state, open: false };
      case 'WebhookResendRequested':
        return { ...state, payload: state.payload ?? event.data.payload };
    }
  },
};

export interface RetrySchedule {
  /** How long after an event (or a resend) attempts go on. */
  periodMs: number;
  /** The wait after the first failure; each failure in a row doubles it, up to maxIntervalMs. */
  firstIntervalMs: number;
  maxIntervalMs: number;
}

/**
 * When the next attempt may start after `failures` failed attempts in a row (the last one ending
 * `now`): exponential backoff with jitter (half the interval fixed, half random, so that
 * receivers coming back are not hit in step), or undefined once that would be past the period
 * that began at `since`. `random` is in [0, 1).
 */
export function nextAttemptAt(schedule: RetrySchedule, failures: number, since: string, now: string, random: number): string | undefined {
  const interval = Math.min(schedule.maxIntervalMs, schedule.firstIntervalMs * 2 ** Math.min(failures - 1, 40));
  const at = Date.parse(now) + interval * (0.5 + random / 2);
  return at > Date.parse(since) + schedule.periodMs ? undefined : new Date(at).toISOString();
}
