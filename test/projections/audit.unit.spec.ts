// The audit's fold and paging without HTTP: every outcome status (pending and failed included,
// which the e2e suite cannot provoke cheaply) and the edges of after/before paging.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { DomainEvent } from '../../src/domain/events.js';
import { OperationsReadModel } from '../../src/projections/operations.js';
import { UsersReadModel } from '../../src/projections/users.js';
import { AuditQueries, pageOf, WHOLE_HISTORY } from '../../src/projections/audit.js';
import type { RecordedEvent } from '../../src/store/port.js';

const actor = { appId: 'game-one', keyId: 'k1' };
const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;

function fold(events: Array<[stream: string, event: DomainEvent]>, streamsRead: string[] = []) {
  const models = { operations: new OperationsReadModel({ now: () => at(0), keyReachMs: 86_400_000 }), users: new UsersReadModel() };
  const revisions = new Map<string, number>();
  const log: RecordedEvent[] = [];
  events.forEach(([streamName, event], i) => {
    const revision = revisions.get(streamName) ?? 0;
    revisions.set(streamName, revision + 1);
    const recorded: RecordedEvent = { streamName, revision, position: (i + 1) * 10, type: event.type, data: event.data, metadata: undefined, created: at(i) };
    log.push(recorded);
    for (const model of Object.values(models)) if ((model.handles as readonly string[]).includes(event.type)) model.apply(recorded);
  });
  const store = {
    readStream: async (name: string) => {
      streamsRead.push(name);
      return log.filter((e) => e.streamName === name);
    },
  };
  return new AuditQueries({ ...models, store });
}

const requested = (operationId: string, point: number, s: number): [string, DomainEvent] => [
  `operation-${operationId}`,
  { type: 'PointsEditRequested', data: { operationId, oId: '42', userId: 'u1', userName: 'alice', request: { point, memo: `m${point}` }, at: at(s), ...actor } },
];

test('every outcome status, with the platform message or the service reason', async () => {
  const audit = fold([
    ['user-42', { type: 'UserRegistered', data: { userId: 'u1', oId: '42', name: 'alice', nickname: 'A', avatar: '', at: at(0) } }],
    requested('a', 1, 1),
    ['operation-a', { type: 'OperationApplied', data: { operationId: 'a', oId: '42', message: 'ok 1', at: at(2) } }],
    requested('b', 2, 3),
    ['operation-b', { type: 'OperationRejected', data: { operationId: 'b', oId: '42', message: '积分不足', at: at(4) } }],
    requested('c', 3, 5),
    ['operation-c', { type: 'OperationFailed', data: { operationId: 'c', oId: '42', reason: 'no key', at: at(6) } }],
    requested('d', 4, 7),
    ['operation-d', { type: 'OperationOutcomeUnknown', data: { operationId: 'd', oId: '42', reason: 'timeout', at: at(8) } }],
    requested('e', 5, 9),
    ['operation-f', { type: 'ItemsEditRequested', data: { operationId: 'f', oId: '42', userId: 'u1', userName: 'alice', request: { item: 'x', sum: 1 }, at: at(10), ...actor } }],
  ]);
  const { items } = await audit.points('42', WHOLE_HISTORY);
  assert.equal(
    items.map((e) => e.outcome),
    [
      { status: 'applied', message: 'ok 1', at: '2026-01-01 00:00:02.000Z' },
      { status: 'rejected', message: '积分不足', at: '2026-01-01 00:00:04.000Z' },
      { status: 'failed', reason: 'no key', at: '2026-01-01 00:00:06.000Z' },
      { status: 'unknown', reason: 'timeout', at: '2026-01-01 00:00:08.000Z' },
      { status: 'pending' },
    ],
  );
  assert.equal(items[0], {
    position: 20,
    time: '2026-01-01 00:00:01.000Z',
    appId: 'game-one',
    keyId: 'k1',
    operationId: 'a',
    request: { point: 1, memo: 'm1' },
    outcome: { status: 'applied', message: 'ok 1', at: '2026-01-01 00:00:02.000Z' },
  });
  assert.equal(await audit.points('43', WHOLE_HISTORY), { items: [] });
  assert.equal(await audit.vip('42', WHOLE_HISTORY), { items: [] }, 'a known user without VIP history');
  assert.equal(await audit.vip('43', WHOLE_HISTORY), { items: [] }, 'an unknown user');
});

test('a page of points edits reads only its own operations, with the cursors of the whole history', async () => {
  const streamsRead: string[] = [];
  const events = [1, 2, 3, 4, 5].flatMap(
    (n): Array<[string, DomainEvent]> => [
      requested(`o${n}`, n, n),
      [`operation-o${n}`, { type: 'OperationApplied', data: { operationId: `o${n}`, oId: '42', message: `ok ${n}`, at: at(n) } }],
    ],
  );
  const audit = fold(events, streamsRead);
  const page = await audit.points('42', { limit: 2, after: 30 });
  assert.equal(
    page.items.map((e) => e.request.point),
    [3, 4],
  );
  assert.equal([page.prev, page.next], [50, 70]);
  assert.equal(streamsRead, ['operation-o3', 'operation-o4']);
});

test('paging: forward, backward, ranges, and cursors between or beyond the entries', () => {
  const entries = [10, 20, 30, 40, 50].map((position) => ({ position }));
  const positions = (page: { items: Array<{ position: number }> }) => page.items.map((e) => e.position);
  assert.equal(pageOf(entries, { limit: 2 }), { items: [{ position: 10 }, { position: 20 }], next: 20 });
  assert.equal(pageOf(entries, { limit: 2, after: 20 }), { items: [{ position: 30 }, { position: 40 }], next: 40, prev: 30 });
  assert.equal(pageOf(entries, { limit: 2, after: 40 }), { items: [{ position: 50 }], prev: 50 });
  assert.equal(pageOf(entries, { limit: 2, after: 50 }), { items: [] });
  assert.equal(positions(pageOf(entries, { limit: 2, after: 25 })), [30, 40], 'a cursor between entries');
  assert.equal(pageOf(entries, { limit: 2, before: 30 }), { items: [{ position: 10 }, { position: 20 }], next: 20 });
  assert.equal(positions(pageOf(entries, { limit: 2, before: 1000 })), [40, 50], 'backward from beyond the end: the newest');
  assert.equal(positions(pageOf(entries, { limit: 1, before: 10 })), []);
  assert.equal(positions(pageOf(entries, { limit: 10, after: 10, before: 50 })), [20, 30, 40]);
  assert.equal(positions(pageOf(entries, { limit: 2, after: 10, before: 50 })), [20, 30], 'a range pages from its start');
  assert.equal(positions(pageOf(entries, { limit: 10, after: 40, before: 20 })), [], 'an empty range');
  assert.equal(pageOf([], { limit: 50 }), { items: [] });
});

test.run();
