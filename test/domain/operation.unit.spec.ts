// A platform operation's record: requested once, then outcomes; an unknown outcome is closed or
// resolved only by the rules (given(events).when(command).then(events)).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConflictError, NotFoundError } from '../../src/domain/errors.js';
import type { OperationEvent, OperationRequested } from '../../src/domain/events.js';
import { ClaimLostError } from '../../src/domain/idempotency.js';
import { operationDecider, type OperationCommand, type SenderOutcome } from '../../src/domain/operation.js';
import { deciderSpec } from '../support/deciderSpec.js';

const T0 = '2026-11-23T12:00:00.000Z';
const T1 = '2026-11-23T12:00:01.000Z';
const operation = deciderSpec(operationDecider);

const requested: OperationRequested = {
  type: 'PointsEditRequested',
  data: { operationId: 'op1', oId: '42', userId: 'u1', userName: 'alice', request: { point: 7, memo: 'quest' }, at: T0, node: 'n1', appId: 'game', keyId: 'k1' },
};
const applied: SenderOutcome = { type: 'OperationApplied', data: { operationId: 'op1', oId: '42', message: 'ok', at: T1 } };
const unknown: OperationEvent = { type: 'OperationOutcomeUnknown', data: { operationId: 'op1', oId: '42', reason: 'timeout', at: T1 } };
const close: OperationCommand = { type: 'CloseAsUnknown', operationId: 'op1', reason: 'its node restarted', at: T1 };
const resolve = (applied: boolean): OperationCommand => ({ type: 'ResolveOutcome', operationId: 'op1', applied, note: 'checked', by: { kind: 'operator', name: 'ops' }, at: T1 });

test('an operation is requested once', () => {
  operation.given().when({ type: 'RequestOperation', requested }).then([requested]);
  operation.given([requested]).when({ type: 'RequestOperation', requested }).thenThrows(ConflictError);
  assert.equal(operation.given().when({ type: 'RequestOperation', requested }).state(), { status: 'pending', oId: '42' });
});

test("the sender's outcome is recorded, even after another node marked the operation unknown", () => {
  operation.given([requested]).when({ type: 'RecordOutcome', outcome: applied }).then([applied]);
  operation.given([requested, unknown]).when({ type: 'RecordOutcome', outcome: applied }).then([applied]);
  operation.given().when({ type: 'RecordOutcome', outcome: applied }).thenThrows(NotFoundError);
});

test("a resolution is final: the sender's answer after it is kept beside it, and the status stays", () => {
  const resolvedNotApplied: OperationEvent = {
    type: 'OperationResolved',
    data: { operationId: 'op1', oId: '42', applied: false, note: 'checked', by: { kind: 'operator', name: 'ops' }, at: T1 },
  };
  const late = operation.given([requested, unknown, resolvedNotApplied]).when({ type: 'RecordOutcome', outcome: applied });
  late.then([{ type: 'OperationAnsweredAfterResolution', data: { operationId: 'op1', oId: '42', answer: 'OperationApplied', detail: applied.data.message, at: applied.data.at } }]);
  assert.equal(late.state(), { status: 'failed', oId: '42', resolved: true });
});

test('only a pending operation is closed as unknown; one with an outcome keeps it', () => {
  operation
    .given([requested])
    .when(close)
    .then([{ type: 'OperationOutcomeUnknown', data: { operationId: 'op1', oId: '42', reason: 'its node restarted', at: T1 } }]);
  operation.given([requested, applied]).when(close).thenNothing();
  operation.given([requested, unknown]).when(close).thenNothing();
});

test('only an unknown outcome can be resolved; the resolution decides the status', () => {
  const resolved = operation.given([requested, unknown]).when(resolve(true));
  resolved.then([{ type: 'OperationResolved', data: { operationId: 'op1', oId: '42', applied: true, note: 'checked', by: { kind: 'operator', name: 'ops' }, at: T1 } }]);
  assert.equal(resolved.state(), { status: 'applied', oId: '42', resolved: true });
  assert.equal(operation.given([requested, unknown]).when(resolve(false)).state(), { status: 'failed', oId: '42', resolved: true });
  operation
    .given([requested, applied])
    .when(resolve(false))
    .thenThrows(ConflictError, /applied, not unknown/);
  operation
    .given([requested])
    .when(resolve(true))
    .thenThrows(ConflictError, /pending/);
  operation.given().when(resolve(true)).thenThrows(NotFoundError);
});

test('an operation abandoned by a takeover can never be recorded; one already recorded is not abandoned', () => {
  const abandon: OperationCommand = { type: 'AbandonOperation', operationId: 'op1', at: T1 };
  const abandoned: OperationEvent = { type: 'OperationAbandoned', data: { operationId: 'op1', at: T1 } };
  operation.given().when(abandon).then([abandoned]);
  operation
    .given([abandoned])
    .when({ type: 'RequestOperation', requested })
    .thenThrows(ClaimLostError, /nothing was written or sent/);
  operation.given([abandoned]).when({ type: 'RecordOutcome', outcome: applied }).thenThrows(NotFoundError);
  operation.given([abandoned]).when(resolve(true)).thenThrows(NotFoundError);
  operation.given([abandoned]).when(close).thenNothing();
  operation.given([abandoned]).when(abandon).thenNothing();
  operation.given([requested]).when(abandon).thenNothing();
});

test.run();
