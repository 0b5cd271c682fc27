// The containers large read models keep their entries in: what goes in comes back out, through a
// snapshot (v8.serialize and back, as the snapshot file holds it) as well as live.
import { deserialize, serialize } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonCodec, mapCodec, NumberColumn, SavedMap, StringColumn, type SavedMapState } from '../../src/projections/columns.js';

const throughFile = <T>(state: T): T => deserialize(serialize(state)) as T;

test('a number column grows past its first block and comes back whole from a snapshot', () => {
  const column = new NumberColumn((n) => new Float64Array(n));
  for (let i = 0; i < 5000; i++) column.push(i * 1.5);
  const restored = new NumberColumn((n) => new Float64Array(n), throughFile(column.snapshotState()));
  assert.is(restored.length, 5000);
  assert.equal([restored.at(0), restored.at(4999)], [0, 4999 * 1.5]);
  restored.push(-1);
  assert.equal([restored.length, restored.at(5000)], [5001, -1]);
});

test('a string column keeps any text, grows, and comes back whole from a snapshot', () => {
  const column = new StringColumn();
  const values = ['', 'a', '你获得了新的奖励', '🎣 fishing', 'x'.repeat(100_000), ...Array.from({ length: 3000 }, (_, i) => `id-${i}`)];
  for (const value of values) column.push(value);
  const restored = new StringColumn(throughFile(column.snapshotState()));
  assert.equal(
    Array.from({ length: restored.length }, (_, i) => restored.at(i)),
    values,
  );
  restored.push('after');
  assert.is(restored.at(values.length), 'after');
});

test('a saved map restored from a snapshot answers as the map it was; a read entry changed in place is kept by the next snapshot', () => {
  const map = new SavedMap<{ name: string; visits: number }>(jsonCodec);
  for (let i = 0; i < 100; i++) map.set(`user-${i}`, { name: `User ${i}`, visits: i });
  const restored = new SavedMap<{ name: string; visits: number }>(jsonCodec, throughFile(map.snapshotState()));
  assert.equal(restored.get('user-7'), { name: 'User 7', visits: 7 });
  assert.is(restored.get('user-7'), restored.get('user-7'), 'a decoded entry is one object until the next snapshot');
  assert.is(restored.get('nobody'), undefined);
  assert.ok(restored.has('user-99') && !restored.has('nobody'));
  restored.get('user-7')!.visits = 700;
  restored.set('user-100', { name: 'User 100', visits: 100 });
  assert.ok(restored.delete('user-0'));
  assert.not.ok(restored.delete('user-0'));
  const again = new SavedMap<{ name: string; visits: number }>(jsonCodec, throughFile(restored.snapshotState()));
  assert.equal(again.get('user-7'), { name: 'User 7', visits: 700 });
  assert.equal(again.get('user-100'), { name: 'User 100', visits: 100 });
  assert.not.ok(again.has('user-0'));
  const all = [...again].sort(([a], [b]) => a.localeCompare(b));
  assert.is(all.length, 100);
  assert.equal(all[0], ['user-1', { name: 'User 1', visits: 1 }]);
});

test('a saved map of Maps keeps their entries in order', () => {
  const map = new SavedMap<Map<string, number>>(mapCodec);
  map.set(
    'alice',
    new Map([
      ['z', 1],
      ['a', 2],
    ]),
  );
  const restored = new SavedMap<Map<string, number>>(mapCodec, throughFile(map.snapshotState()));
  assert.equal(
    [...restored.get('alice')!],
    [
      ['z', 1],
      ['a', 2],
    ],
  );
});

test('values replaced snapshot after snapshot do not pile up in the saved block', () => {
  let map = new SavedMap<number>(jsonCodec);
  for (let i = 0; i < 500; i++) map.set(`k${i}`, 0);
  let state: SavedMapState = map.snapshotState();
  for (let round = 1; round <= 20; round++) {
    map = new SavedMap<number>(jsonCodec, throughFile(state));
    for (let i = 0; i < 500; i++) map.set(`k${i}`, round);
    state = map.snapshotState();
    assert.ok(state.values.ends.length <= 2 * 500 + 1024, `round ${round}: ${state.values.ends.length} values kept for 500 keys`);
  }
  const last = new SavedMap<number>(jsonCodec, throughFile(state));
  assert.equal(
    [...last].map(([, value]) => value),
    Array<number>(500).fill(20),
  );
});

test('entries encoded ahead in slices are what the snapshot holds, and read back as they were', () => {
  const map = new SavedMap<{ n: number }>(jsonCodec);
  for (let i = 0; i < 25; i++) map.set(`k${i}`, { n: i });
  let slices = 0;
  while (map.encodeAhead(10)) slices++;
  assert.is(slices, 2, 'ten, ten, then the last five');
  assert.equal(map.get('k7'), { n: 7 });
  map.get('k7')!.n = 70;
  const restored = new SavedMap<{ n: number }>(jsonCodec, throughFile(map.snapshotState()));
  assert.equal(
    [...restored].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true })).map(([, value]) => value.n),
    [0, 1, 2, 3, 4, 5, 6, 70, ...Array.from({ length: 17 }, (_, i) => i + 8)],
  );
});

test.run();
