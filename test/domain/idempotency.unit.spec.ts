// The Idempotency-Key rules as a pure function of the key's history and what the log says about
// the operation it is bound to: given(events).judge(request) → verdict.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fold } from '../../src/domain/decider.js';
import { IdempotencyKeyReusedError } from '../../src/domain/errors.js';
import type { IdempotencyEvent } from '../../src/domain/events.js';
import { ClaimLostError, idempotencyDecider, judge, type IdempotencyCommand, type OperationView } from '../../src/domain/idempotency.js';
import { deciderSpec } from '../support/deciderSpec.js';

const NOW = '2026-11-23T12:00:00.000Z';
const STALE_BEFORE = '2026-11-23T11:59:00.000Z';
const FRESH = '2026-11-23T11:59:30.000Z';
const OLD = '2026-11-23T11:58:00.000Z';
const EXPIRES = '2026-11-24T12:00:00.000Z';

const started = (at: string, claim = 'c1'): IdempotencyEvent => ({
  type: 'IdempotentRequestStarted',
  data: { appId: 'game', requestHash: 'h', at, expires: EXPIRES, node: 'n1', claim },
});
const bound: IdempotencyEvent = { type: 'IdempotentOperationBound', data: { appId: 'game', operationId: 'op1', at: FRESH } };
const completed = (status: number, body: unknown = { code: 0, msg: 'ok' }, expires = EXPIRES): IdempotencyEvent => ({
  type: 'IdempotentRequestCompleted',
  data: { appId: 'game', requestHash: 'h', status, body, at: FRESH, expires },
});
const released: IdempotencyEvent = { type: 'IdempotentRequestReleased', data: { appId: 'game', at: FRESH } };

/** n1 holds the claims below: `live` says whether its heartbeats still move. */
const given = (...history: IdempotencyEvent[]) => ({
  judge: (operation?: OperationView, requestHash = 'h', live = false) =>
    judge(fold(idempotencyDecider, history), requestHash, { now: NOW, staleBefore: STALE_BEFORE, liveNodes: live ? ['n1', 'n2'] : ['n2'] }, operation),
});

const pending: OperationView = { status: 'pending', resolved: false };
const unknown: OperationView = { status: 'unknown', resolved: false };
const applied: OperationView = { status: 'applied', resolved: false };

test('a new key runs; so does a released or an expired one', () => {
  assert.equal(given().judge(), { action: 'execute' });
  assert.equal(given(started(FRESH), released).judge(), { action: 'execute' });
  assert.equal(given(started(OLD), completed(200, {}, OLD)).judge(), { action: 'execute' });
});

test('the same key with another request is refused', () => {
  assert.throws(
    () => given(started(FRESH), completed(200)).judge(undefined, 'other'),
    (e: unknown) => e instanceof IdempotencyKeyReusedError,
  );
});

test('a request still running makes a retry wait, bound or not', () => {
  assert.equal(given(started(FRESH)).judge(), { action: 'wait' });
  assert.equal(given(started(FRESH), bound).judge(pending), { action: 'wait' });
});

test('a stale claim that recorded no operation may be taken over', () => {
  assert.equal(given(started(OLD)).judge(), { action: 'execute' });
  // Bound, but the intent was never recorded: its request may only be stalled, so the operation
  // is first ruled out for good; once it is, nothing can have been sent nor can be.
  assert.equal(given(started(OLD), bound).judge(undefined), { action: 'abandon', operationId: 'op1' });
  assert.equal(given(started(FRESH), bound).judge(undefined), { action: 'wait' });
  assert.equal(given(started(OLD), bound).judge('abandoned'), { action: 'execute' });
});

test('a stale claim bound to an operation is never run again: it answers for the operation', () => {
  // Its node is gone: nobody will answer for the operation but the log.
  assert.equal(given(started(OLD), bound).judge(pending), { action: 'operation', operationId: 'op1' });
  assert.equal(given(started(OLD), bound).judge(unknown), { action: 'operation', operationId: 'op1' });
  assert.equal(given(started(FRESH), bound).judge(applied), { action: 'operation', operationId: 'op1' });
});

test('a kept answer is replayed, unless it said the outcome was unknown or an operator resolved it since', () => {
  assert.equal(given(started(FRESH), bound, completed(200)).judge(applied), { action: 'replay', status: 200, body: { code: 0, msg: 'ok' } });
  assert.equal(given(started(FRESH), completed(409, { code: 409 })).judge(), { action: 'replay', status: 409, body: { code: 409 } });
  assert.equal(given(started(FRESH), bound, completed(504)).judge(unknown), { action: 'operation', operationId: 'op1' });
  assert.equal(given(started(FRESH), bound, completed(504)).judge(applied), { action: 'operation', operationId: 'op1' });
  assert.equal(given(started(FRESH), bound, completed(200)).judge({ status: 'failed', resolved: true }), { action: 'operation', operationId: 'op1' });
});

test('a claim whose operation is pending waits while its node lives, however old: its request may yet answer', () => {
  assert.equal(given(started(OLD), bound).judge(pending, 'h', true), { action: 'wait' });
  assert.equal(given(started(OLD), bound).judge(unknown, 'h', true), { action: 'operation', operationId: 'op1' });
  assert.equal(given(started(OLD), bound).judge(applied, 'h', true), { action: 'operation', operationId: 'op1' });
});

test("a claim's age counts from when the log recorded it, not from the time its node wrote in it", () => {
  const waitedAtItsAppend = { ...started(OLD), created: FRESH } as IdempotencyEvent;
  assert.equal(given(waitedAtItsAppend).judge(), { action: 'wait' });
  assert.equal(given(started(OLD)).judge(), { action: 'execute' });
});

const key = deciderSpec(idempotencyDecider);
const start = (operation?: OperationView, claim = 'c2'): IdempotencyCommand => ({
  type: 'StartRequest',
  appId: 'game',
  requestHash: 'h',
  claim,
  node: 'n2',
  at: NOW,
  expires: EXPIRES,
  staleBefore: STALE_BEFORE,
  liveNodes: ['n2'],
  operation: { operationId: 'op1', view: operation },
});

test('a request claims a free key under a name of its own; a key it may not run records nothing', () => {
  key
    .given()
    .when(start())
    .then([{ type: 'IdempotentRequestStarted', data: { appId: 'game', requestHash: 'h', at: NOW, expires: EXPIRES, node: 'n2', claim: 'c2', epoch: 'c2' } }]);
  key
    .given([started(FRESH)])
    .when(start())
    .thenNothing();
  key
    .given([started(OLD), bound])
    .when(start(pending))
    .thenNothing();
  key
    .given([started(OLD), bound])
    .when(start())
    .thenNothing();
  key
    .given([started(FRESH), completed(200)])
    .when(start())
    .thenNothing();
  key
    .given([started(FRESH), completed(200)])
    .when({ ...start(), requestHash: 'other' } as IdempotencyCommand)
    .thenThrows(IdempotencyKeyReusedError);
});

test('a stale claim that sent nothing is taken over, and its old holder can then bind, answer and free nothing', () => {
  const takenOver = [started(OLD, 'c1'), started(NOW, 'c2')];
  // The takeover goes on with the key's use: what the old holder wrote under it is not written again.
  key
    .given([started(OLD, 'c1')])
    .when(start())
    .then([{ type: 'IdempotentRequestStarted', data: { appId: 'game', requestHash: 'h', at: NOW, expires: EXPIRES, node: 'n2', claim: 'c2', epoch: 'c1' } }]);
  key.given(takenOver).when({ type: 'BindOperation', claim: 'c1', operationId: 'op1', at: NOW }).thenThrows(ClaimLostError);
  key.given(takenOver).when({ type: 'CompleteRequest', claim: 'c1', status: 200, body: {}, at: NOW, expires: EXPIRES }).thenNothing();
  key.given(takenOver).when({ type: 'ReleaseRequest', claim: 'c1', at: NOW }).thenNothing();
  key
    .given(takenOver)
    .when({ type: 'BindOperation', claim: 'c2', operationId: 'op2', at: NOW })
    .then([{ type: 'IdempotentOperationBound', data: { appId: 'game', operationId: 'op2', at: NOW } }]);
});

test('a released key claimed again for the same request goes on with its use; for another one after expiry, a new use', () => {
  key
    .given([started(FRESH), released])
    .when(start())
    .then([{ type: 'IdempotentRequestStarted', data: { appId: 'game', requestHash: 'h', at: NOW, expires: EXPIRES, node: 'n2', claim: 'c2', epoch: 'c1' } }]);
  const expired: IdempotencyEvent = { type: 'IdempotentRequestStarted', data: { appId: 'game', requestHash: 'h', at: OLD, expires: OLD, node: 'n1', claim: 'c1' } };
  key
    .given([expired, released])
    .when(start())
    .then([{ type: 'IdempotentRequestStarted', data: { appId: 'game', requestHash: 'h', at: NOW, expires: EXPIRES, node: 'n2', claim: 'c2', epoch: 'c2' } }]);
});

test('the holder binds, then keeps the answer; a released key is free again', () => {
  const answer = key.given([started(FRESH), bound]).when({ type: 'CompleteRequest', claim: 'c1', status: 200, body: { code: 0 }, at: NOW, expires: EXPIRES });
  answer.then([{ type: 'IdempotentRequestCompleted', data: { appId: 'game', requestHash: 'h', status: 200, body: { code: 0 }, at: NOW, expires: EXPIRES } }]);
  assert.equal(answer.state(), { kind: 'completed', appId: 'game', requestHash: 'h', status: 200, body: { code: 0 }, expires: EXPIRES, operationId: 'op1' });
  assert.equal(
    key
      .given([started(FRESH)])
      .when({ type: 'ReleaseRequest', claim: 'c1', at: NOW })
      .state(),
    { kind: 'free', last: { epoch: 'c1', requestHash: 'h', expires: EXPIRES } },
  );
  key
    .given([started(FRESH), completed(200)])
    .when({ type: 'BindOperation', claim: 'c1', operationId: 'op1', at: NOW })
    .thenThrows(ClaimLostError);
});

test('claims recorded before they had names are named by where and when they were taken', () => {
  const unnamed: IdempotencyEvent = { type: 'IdempotentRequestStarted', data: { appId: 'game', requestHash: 'h', at: FRESH, expires: EXPIRES, node: 'n1' } };
  key
    .given([unnamed])
    .when({ type: 'ReleaseRequest', claim: `n1@${FRESH}`, at: NOW })
    .then([{ type: 'IdempotentRequestReleased', data: { appId: 'game', at: NOW } }]);
});

test.run();
