// The outbox (src/projections/webhooks.ts) folded from recorded events: which events become
// deliveries, to which endpoints, under which ids; a push's delivered recipients; one user's
// deliveries in order; what an
// attempt's start and end do to a delivery; what deleting an endpoint drops.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { DomainEvent } from '../../src/domain/events.js';
import { ClientsReadModel } from '../../src/projections/clients.js';
import { UsersReadModel } from '../../src/projections/users.js';
import { WebhooksReadModel } from '../../src/projections/webhooks.js';
import type { RecordedEvent } from '../../src/store/port.js';

const AT = '2027-01-01T00:00:00.000Z';
const actor = { appId: 'game-one', keyId: 'key000000000001' };

function world() {
  const users = new UsersReadModel();
  const clients = new ClientsReadModel();
  const model = new WebhooksReadModel(users, clients);
  let position = 0;
  const revisions = new Map<string, number>();
  const apply = (streamName: string, event: DomainEvent) => {
    const revision = (revisions.get(streamName) ?? -1) + 1;
    revisions.set(streamName, revision);
    const recorded: RecordedEvent = { streamName, revision, position: ++position, type: event.type, data: event.data, metadata: undefined, created: AT };
    users.apply(recorded);
    clients.apply(recorded);
    model.apply(recorded);
    return recorded.position;
  };
  const register = (endpointId: string, appId: string, events: string[]) =>
    apply(`webhook-${endpointId}`, {
      type: 'WebhookRegistered',
      data: { endpointId, appId, url: 'https://game.example/hook', events: events as never, description: '', secret: 'v1.x', at: AT },
    });
  const signIn = (clientId: string, userId: string) => apply(`client-${clientId}`, { type: 'ClientSignedIn', data: { clientId, userId, oId: `1${userId}`, at: AT } });
  const disconnect = (clientId: string) => apply(`client-${clientId}`, { type: 'ClientDisconnected', data: { clientId, reason: 'closed', at: AT } });
  return { model, apply, register, signIn, disconnect };
}

const pending = (model: WebhooksReadModel) => [...model.pending()].map((d) => [d.deliveryId, d.payload.type, d.payload.eventId]);

test('a sign-in becomes one delivery per enabled endpoint that wants it, named by its position and the endpoint', () => {
  const { model, apply, register, signIn } = world();
  register('aaaaaaaaaaaaaaa', 'game-one', ['client.signed_in']);
  register('bbbbbbbbbbbbbbb', 'game-two', ['client.signed_in', 'client.disconnected']);
  register('ccccccccccccccc', 'game-one', ['client.disconnected']);
  register('ddddddddddddddd', 'game-one', ['client.signed_in']);
  apply('webhook-ddddddddddddddd', { type: 'WebhookDisabled', data: { endpointId: 'ddddddddddddddd', reason: 'requested', detail: '', at: AT } });
  const at = signIn('c1', 'u1');
  assert.equal(pending(model), [
    [`aaaaaaaaaaaaaaa-${at}`, 'client.signed_in', `evt_${at}`],
    [`bbbbbbbbbbbbbbb-${at}`, 'client.signed_in', `evt_${at}`],
  ]);
  const body = JSON.parse([...model.pending()][1]!.payload.body);
  assert.equal(body, { id: `evt_${at}`, type: 'client.signed_in', created: AT, app: 'game-two', data: { clientId: 'c1', user: { id: 'u1', oId: '1u1' } } });
});

test('a disconnect is sent for a signed-in client only: an anonymous connection causes nothing', () => {
  const { model, apply, register, signIn, disconnect } = world();
  register('aaaaaaaaaaaaaaa', 'game-one', ['client.disconnected']);
  apply('client-anon', { type: 'ClientConnected', data: { clientId: 'anon', node: 'n1', at: AT } });
  disconnect('anon');
  assert.equal([...model.pending()], []);
  signIn('c1', 'u1');
  const at = disconnect('c1');
  assert.equal(
    [...model.pending()].map((d) => JSON.parse(d.payload.body).data),
    [{ clientId: 'c1', user: { id: 'u1', oId: '1u1' }, reason: 'closed' }],
  );
  assert.is([...model.pending()][0]!.deliveryId, `aaaaaaaaaaaaaaa-${at}`);
});

test("a push that reaches signed-in clients becomes one message.delivered to its own app's endpoints, with the ids as given that were online", () => {
  const { model, apply, register, signIn } = world();
  register('aaaaaaaaaaaaaaa', 'game-one', ['message.delivered']);
  register('bbbbbbbbbbbbbbb', 'game-two', ['message.delivered']);
  for (const userId of ['u1', 'u2']) {
    apply(`user-1${userId}`, { type: 'UserRegistered', data: { userId, oId: `1${userId}`, name: userId, nickname: userId, avatar: '', at: AT } });
  }
  apply('client-c1', { type: 'ClientConnected', data: { clientId: 'c1', node: 'n1', at: AT } });
  signIn('c1', 'u1');
  const push = (messageId: string, oIds: string[], userIds: string[], appId = 'game-one') =>
    apply(`message-${messageId}`, { type: 'MessagePushed', data: { messageId, name: 'hello', data: {}, oIds, userIds, at: AT, appId, keyId: actor.keyId } });
  push('nobodyonline001', ['1u2', '42'], []);
  assert.equal([...model.pending()], [], 'nobody online: nothing delivered, nothing sent');
  push('othersapp000001', ['1u1'], [], 'game-two');
  const at = push('reachedsome0001', ['1u1', '1u2', '42', '1u1'], ['u1', 'u2', 'nobody']);
  const delivered = [...model.pending()].filter((d) => d.deliveryId === `aaaaaaaaaaaaaaa-${at}`);
  assert.equal(
    delivered.map((d) => [d.payload.type, d.payload.orderKey, JSON.parse(d.payload.body).data]),
    [['message.delivered', undefined, { messageId: 'reachedsome0001', name: 'hello', oIds: ['1u1', '1u1'], userIds: ['u1'] }]],
  );
  assert.equal(
    [...model.pending()].map((d) => d.deliveryId),
    [`bbbbbbbbbbbbbbb-${at - 1}`, `aaaaaaaaaaaaaaa-${at}`],
    'each app hears of its own pushes only',
  );
  assert.ok(model.isFirstInOrder(delivered[0]!), 'it waits for no user');
});

test("one user's deliveries go in order: the next is first once the one before is delivered or given up", () => {
  const { model, apply, register, signIn, disconnect } = world();
  register('aaaaaaaaaaaaaaa', 'game-one', ['client.signed_in', 'client.disconnected']);
  const first = signIn('c1', 'u1');
  const second = disconnect('c1');
  const other = signIn('c2', 'u2');
  const byId = (position: number) => [...model.pending()].find((d) => d.deliveryId === `aaaaaaaaaaaaaaa-${position}`)!;
  assert.equal(
    [first, second, other].map((p) => model.isFirstInOrder(byId(p))),
    [true, false, true],
  );
  const stream = `webhookdelivery-aaaaaaaaaaaaaaa-${first}`;
  const ids = { deliveryId: `aaaaaaaaaaaaaaa-${first}`, endpointId: 'aaaaaaaaaaaaaaa' };
  apply(stream, { type: 'WebhookAttemptStarted', data: { ...ids, attempt: 1, node: 'n1', at: AT, payload: byId(first).payload } });
  assert.equal(byId(first).open, { attempt: 1, node: 'n1', recorded: AT });
  apply(stream, { type: 'WebhookAttemptFinished', data: { ...ids, attempt: 1, delivered: false, status: 500, durationMs: 3, retryAt: '2027-01-01T00:00:30.000Z', at: AT } });
  assert.equal([byId(first).open, byId(first).failures, byId(first).dueAt, byId(first).revision], [undefined, 1, '2027-01-01T00:00:30.000Z', 1]);
  assert.is(model.isFirstInOrder(byId(second)), false, 'still waiting while the first is retried');
  apply(stream, { type: 'WebhookAttemptStarted', data: { ...ids, attempt: 2, node: 'n1', at: AT } });
  apply(stream, { type: 'WebhookAttemptFinished', data: { ...ids, attempt: 2, delivered: true, status: 200, durationMs: 3, at: AT } });
  assert.is(byId(first), undefined, 'delivered: out of the outbox');
  assert.is(model.isFirstInOrder(byId(second)), true);
  assert.equal(
    model.attempts('aaaaaaaaaaaaaaa').map((a) => [a.attempt, a.ended?.delivered]),
    [
      [2, true],
      [1, false],
    ],
  );
  assert.is(model.endpoint('aaaaaaaaaaaaaaa')!.lastDelivered, AT);
});

test("an operation's events go to its own app's endpoints, from the request on; deleting an endpoint drops its deliveries", () => {
  const { model, apply, register } = world();
  register('aaaaaaaaaaaaaaa', 'game-one', ['operation.outcome_unknown', 'operation.resolved']);
  register('bbbbbbbbbbbbbbb', 'game-two', ['operation.outcome_unknown', 'operation.resolved']);
  const request = { operationId: 'op1', oId: '1u1', userId: 'u1', userName: 'alice', request: { point: 1, memo: 'm' }, at: AT, ...actor };
  apply('operation-op1', { type: 'PointsEditRequested', data: request });
  apply('operation-op1', { type: 'OperationOutcomeUnknown', data: { operationId: 'op1', oId: '1u1', reason: 'timeout', at: AT } });
  apply('operation-op1', { type: 'OperationResolved', data: { operationId: 'op1', oId: '1u1', applied: true, note: 'seen', by: { kind: 'operator', name: 'carol' }, at: AT } });
  assert.equal(
    [...model.pending()].map((d) => [d.endpointId, d.payload.type, JSON.parse(d.payload.body).data.kind]),
    [
      ['aaaaaaaaaaaaaaa', 'operation.outcome_unknown', 'points.edit'],
      ['aaaaaaaaaaaaaaa', 'operation.resolved', 'points.edit'],
    ],
  );
  apply('webhook-aaaaaaaaaaaaaaa', { type: 'WebhookDeleted', data: { endpointId: 'aaaaaaaaaaaaaaa', at: AT } });
  assert.equal([...model.pending()], []);
  assert.is(model.endpoint('aaaaaaaaaaaaaaa'), undefined);
});

test.run();
