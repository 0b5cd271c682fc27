// The operations read model keeps little per operation: a status only where a retry can ask for
// it, a user's operations as references, whole records only while the outcome is unknown.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { DomainEvent, OperationRequested } from '../../src/domain/events.js';
import { OperationsReadModel, readOperation } from '../../src/projections/operations.js';
import type { RecordedEvent } from '../../src/store/port.js';

const actor = { appId: 'game-one', keyId: 'k1' };
const at = '2026-01-01T00:00:00.000Z';
let now = at;

function world() {
  const applied: OperationRequested[] = [];
  const fold = {
    applied: (requested: OperationRequested) => applied.push(requested),
    snapshotState: () => [...applied],
    restoreState: (state: unknown) => applied.splice(0, applied.length, ...(state as OperationRequested[])),
  };
  const model = new OperationsReadModel({ now: () => now, keyReachMs: 60_000 }, [fold]);
  const log: RecordedEvent[] = [];
  const append = (operationId: string, event: DomainEvent) => {
    const streamName = `operation-${operationId}`;
    const recorded: RecordedEvent = {
      streamName,
      revision: log.filter((e) => e.streamName === streamName).length,
      position: log.length + 1,
      type: event.type,
      data: event.data,
      metadata: undefined,
      created: at,
    };
    log.push(recorded);
    model.apply(recorded);
  };
  const store = { readStream: async (name: string) => log.filter((e) => e.streamName === name) };
  return { model, applied, append, store };
}

const points = (operationId: string, claim?: string): DomainEvent => ({
  type: 'PointsEditRequested',
  data: { operationId, oId: '42', userId: 'u1', userName: 'alice', request: { point: 5, memo: 'm' }, at, ...actor, ...(claim && { claim }) },
});
const outcome = (type: 'OperationApplied' | 'OperationRejected', operationId: string): DomainEvent => ({ type, data: { operationId, oId: '42', message: type, at } });

test('a settled operation keeps its status only when a key can ask for it', () => {
  const { model, append } = world();
  append('keyed', points('keyed', 'idempotency-game-one-abc'));
  append('plain', points('plain'));
  assert.equal(model.view('keyed'), { status: 'pending', resolved: false });
  assert.equal(model.view('plain'), { status: 'pending', resolved: false });
  append('keyed', outcome('OperationApplied', 'keyed'));
  append('plain', outcome('OperationApplied', 'plain'));
  assert.equal(model.view('keyed'), { status: 'applied', resolved: false });
  assert.is(model.view('plain'), undefined);
  assert.is(model.view('never'), undefined);
  append('gone', { type: 'OperationAbandoned', data: { operationId: 'gone', at } });
  assert.is(model.view('gone'), 'abandoned');
});

test('a settled status is forgotten once no key can name it, and an old one is never kept', () => {
  now = '2026-01-01T00:00:30.000Z';
  const { model, append } = world();
  append('old', points('old', 'idempotency-game-one-old'));
  append('old', { type: 'OperationApplied', data: { operationId: 'old', oId: '42', message: 'ok', at: '2025-12-31T23:58:59.000Z' } });
  assert.is(model.view('old'), undefined, 'settled more than keyReachMs before the model started');
  append('k', points('k', 'idempotency-game-one-k'));
  append('k', outcome('OperationApplied', 'k'));
  assert.equal(model.view('k'), { status: 'applied', resolved: false });
  now = '2026-01-01T00:01:01.000Z';
  for (let i = 0; i < 1000; i++) {
    append(`x${i}`, points(`x${i}`, `idempotency-game-one-x${i}`));
    append(`x${i}`, { type: 'OperationApplied', data: { operationId: `x${i}`, oId: '42', message: 'ok', at: now } });
  }
  assert.is(model.view('k'), undefined, 'a minute after it settled, with keyReachMs at one minute');
  assert.equal(model.view('x999'), { status: 'applied', resolved: false });
  now = at;
});

test('applied requests reach the folds once; rejected ones do not; a late answer after unknown does', () => {
  const { model, append, applied } = world();
  append('a', points('a'));
  append('a', outcome('OperationApplied', 'a'));
  append('b', points('b'));
  append('b', outcome('OperationRejected', 'b'));
  append('c', points('c'));
  append('c', { type: 'OperationOutcomeUnknown', data: { operationId: 'c', oId: '42', reason: 'timeout', at } });
  assert.equal(
    model.withoutOutcome('unknown').map((r) => [r.operationId, r.unknownReason]),
    [['c', 'timeout']],
  );
  append('c', outcome('OperationApplied', 'c'));
  assert.equal(
    applied.map((r) => r.data.operationId),
    ['a', 'c'],
  );
  assert.equal(model.withoutOutcome('unknown'), []);
  assert.equal(model.withoutOutcome('pending'), []);
});

test("a user's history is references in log order, and each record is read from its stream", async () => {
  const { model, append, store } = world();
  append('a', points('a'));
  append('a', outcome('OperationApplied', 'a'));
  append('m', {
    type: 'MedalGiveRequested',
    data: { operationId: 'm', oId: '42', userId: 'u1', userName: 'alice', request: { name: 'gold', description: '', attr: '', data: '' }, at, ...actor },
  });
  append('b', points('b'));
  assert.equal(model.history('42'), [
    { position: 1, operationId: 'a' },
    { position: 3, operationId: 'm' },
    { position: 4, operationId: 'b' },
  ]);
  assert.equal(
    model.history('42', 'PointsEditRequested').map((r) => r.operationId),
    ['a', 'b'],
  );
  const record = await readOperation(store, 'a');
  assert.equal([record?.status, record?.revision, record?.outcome?.detail, record?.request], ['applied', 1, 'OperationApplied', { point: 5, memo: 'm' }]);
  assert.is(await readOperation(store, 'none'), undefined);
});

test.run();
