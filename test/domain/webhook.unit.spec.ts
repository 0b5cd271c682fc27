// The webhook endpoint's life and the rules around deliveries (src/domain/webhook.ts): what a URL
// may be, what each change records, that a deleted endpoint is gone, what a resend needs, and
// when the next attempt is due.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConflictError, NotFoundError, ValidationError } from '../../src/domain/errors.js';
import type { WebhookDeliveryEvent, WebhookEndpointEvent } from '../../src/domain/events.js';
import { deliveryDecider, nextAttemptAt, webhookDecider, webhookUrlProblem, type WebhookCommand } from '../../src/domain/webhook.js';
import { deciderSpec } from '../support/deciderSpec.js';

const endpoints = deciderSpec(webhookDecider);
const deliveries = deciderSpec(deliveryDecider);
const ID = 'end000000000001';
const AT = '2027-01-01T00:00:00.000Z';
const register: WebhookCommand = {
  type: 'RegisterWebhook',
  endpointId: ID,
  appId: 'game-one',
  url: 'https://game.example/hook',
  events: ['client.signed_in', 'client.signed_in'],
  description: '',
  secret: 'v1.sealed',
  at: AT,
};
const registered: WebhookEndpointEvent = {
  type: 'WebhookRegistered',
  data: { endpointId: ID, appId: 'game-one', url: 'https://game.example/hook', events: ['client.signed_in'], description: '', secret: 'v1.sealed', at: AT },
};
const deleted: WebhookEndpointEvent = { type: 'WebhookDeleted', data: { endpointId: ID, at: AT } };
const disable = (reason: 'requested' | 'failing'): WebhookCommand => ({ type: 'DisableWebhook', endpointId: ID, reason, detail: '', at: AT });

test('URLs: https anywhere, http to loopback only, no credentials or fragment', () => {
  assert.is(webhookUrlProblem('https://game.example/hook?x=1'), undefined);
  assert.is(webhookUrlProblem('http://localhost:8080/hook'), undefined);
  assert.is(webhookUrlProblem('http://127.0.0.2/hook'), undefined);
  assert.is(webhookUrlProblem('http://[::1]:9000/'), undefined);
  assert.match(webhookUrlProblem('http://game.example/')!, /must be https/);
  assert.match(webhookUrlProblem('http://127.0.0.1.game.example/')!, /must be https/);
  assert.match(webhookUrlProblem('javascript:alert(1)')!, /must be an https URL/);
  assert.match(webhookUrlProblem('https://a:b@game.example/')!, /user name or password/);
  assert.match(webhookUrlProblem('https://game.example/#frag')!, /fragment/);
});

test('registering records the endpoint once, its event types without repeats; a bad URL records nothing', () => {
  endpoints.given().when(register).then([registered]);
  endpoints.given([registered]).when(register).thenThrows(ConflictError);
  endpoints
    .given()
    .when({ ...register, url: 'http://game.example/' })
    .thenThrows(ValidationError, /^url: must be https/);
  endpoints
    .given()
    .when({ ...register, events: [] })
    .thenThrows(ValidationError, /^events:/);
});

test('disabling twice records once and keeps the first reason; enabling clears it; a rotation keeps the previous secret until its time', () => {
  const disabledEvent: WebhookEndpointEvent = { type: 'WebhookDisabled', data: { endpointId: ID, reason: 'requested', detail: '', at: AT } };
  endpoints.given([registered]).when(disable('requested')).then([disabledEvent]);
  endpoints.given([registered, disabledEvent]).when(disable('failing')).thenNothing();
  endpoints.given([registered]).when({ type: 'EnableWebhook', endpointId: ID, at: AT }).thenNothing();
  const enabled = endpoints.given([registered, disabledEvent]).when({ type: 'EnableWebhook', endpointId: ID, at: AT }).state();
  assert.ok(enabled.exists && enabled.status === 'enabled' && enabled.disabled === undefined);
  const rotated = endpoints.given([registered]).when({ type: 'RotateWebhookSecret', endpointId: ID, secret: 'v1.new', previousUntil: '2027-01-02T00:00:00.000Z', at: AT }).state();
  assert.ok(rotated.exists);
  if (rotated.exists) assert.equal([rotated.secret, rotated.previous], ['v1.new', { secret: 'v1.sealed', until: '2027-01-02T00:00:00.000Z' }]);
});

test('a deleted endpoint is gone for every change', () => {
  for (const command of [
    disable('requested'),
    { type: 'EnableWebhook', endpointId: ID, at: AT },
    { type: 'DeleteWebhook', endpointId: ID, at: AT },
    { type: 'RotateWebhookSecret', endpointId: ID, secret: 's', previousUntil: AT, at: AT },
  ] as WebhookCommand[]) {
    endpoints.given([registered, deleted]).when(command).thenThrows(NotFoundError);
    endpoints.given([]).when(command).thenThrows(NotFoundError);
  }
});

test('a resend needs a delivery attempted and not in progress; it carries what was sent (without its order) and the attempts so far', () => {
  const payload = { eventId: 'evt_7', type: 'client.signed_in' as const, body: '{}', orderKey: 'user:u1' };
  const started: WebhookDeliveryEvent = { type: 'WebhookAttemptStarted', data: { deliveryId: `${ID}-7`, endpointId: ID, attempt: 1, node: 'n1', at: AT, payload } };
  const finished: WebhookDeliveryEvent = {
    type: 'WebhookAttemptFinished',
    data: { deliveryId: `${ID}-7`, endpointId: ID, attempt: 1, delivered: true, status: 200, durationMs: 3, at: AT },
  };
  const resend = { type: 'RequestResend' as const, deliveryId: `${ID}-7`, endpointId: ID, at: AT };
  deliveries.given([]).when(resend).thenThrows(NotFoundError);
  deliveries
    .given([started])
    .when(resend)
    .thenThrows(ConflictError, /attempt in progress/);
  const { orderKey: _, ...unordered } = payload;
  deliveries
    .given([started, finished])
    .when(resend)
    .then([{ type: 'WebhookResendRequested', data: { deliveryId: `${ID}-7`, endpointId: ID, payload: unordered, attempts: 1, at: AT } }]);
});

test('the next attempt: doubling from the first interval with jitter, capped, and none past the period', () => {
  const schedule = { periodMs: 72 * 3_600_000, firstIntervalMs: 30_000, maxIntervalMs: 6 * 3_600_000 };
  const wait = (failures: number, random: number, now = AT) => Date.parse(nextAttemptAt(schedule, failures, AT, now, random)!) - Date.parse(now);
  assert.equal([wait(1, 0), wait(1, 0.5)], [15_000, 22_500]);
  assert.is(wait(2, 0), 30_000);
  assert.is(wait(5, 0), 240_000);
  assert.is(wait(30, 0), 3 * 3_600_000, 'capped at the maximum interval (half of it fixed)');
  const late = new Date(Date.parse(AT) + 71 * 3_600_000).toISOString();
  assert.is(nextAttemptAt(schedule, 30, AT, late, 0), undefined, 'past the period: given up');
  assert.type(nextAttemptAt(schedule, 1, AT, late, 0), 'string', 'a short wait still fits');
});

test.run();
