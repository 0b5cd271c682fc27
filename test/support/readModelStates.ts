// Every read model's whole state, serialised and read back as a snapshot would hold it, in a form
// two states compare in with assert.equal: column blocks decoded, Maps, Sets and restored Maps as
// entries sorted by key (a restored Map lists its entries in another order than a replayed one).
import { deserialize, serialize } from 'node:v8';
import { StringColumn, type SavedMapState, type StringColumnState } from '../../src/projections/columns.js';
import type { ProjectionRunner } from '../../src/projections/runner.js';

const isStringColumn = (value: object): value is StringColumnState =>
  Object.keys(value).length === 2 && 'bytes' in value && value.bytes instanceof Uint8Array && 'ends' in value && value.ends instanceof Uint32Array;

const isSavedMap = (value: object): value is SavedMapState =>
  Object.keys(value).length === 4 && 'keys' in value && 'keyEnds' in value && 'slots' in value && 'values' in value && isStringColumn(value.values as object);

const strings = (column: StringColumnState) => {
  const decoded = new StringColumn(column);
  return Array.from({ length: decoded.length }, (_, i) => decoded.at(i));
};

/** An encoded value as data (a string kept as text is itself). */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const byKey = (a: [unknown, unknown], b: [unknown, unknown]) => String(a[0]).localeCompare(String(b[0]));

function canonical(value: unknown): unknown {
  if (value instanceof Map) return [...value].map(([k, v]) => [k, canonical(v)] as [unknown, unknown]).sort(byKey);
  if (value instanceof Set) return [...value].map(canonical).sort();
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  if (isSavedMap(value)) {
    const values = strings(value.values);
    const keys = Array.from(value.keyEnds, (end, i) => value.keys.slice(i === 0 ? 0 : value.keyEnds[i - 1], end));
    return keys.map((key, i) => [key, canonical(parsed(values[value.slots[i]!]!))] as [unknown, unknown]).sort(byKey);
  }
  if (isStringColumn(value)) return strings(value);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v)]));
}

/** Each read model's state by name, as a snapshot would save it. */
export function readModelStates(runner: Pick<ProjectionRunner, 'projections'>): Record<string, unknown> {
  return Object.fromEntries(runner.projections.map((projection) => [projection.name, canonical(deserialize(serialize(projection.snapshotState())))]));
}
