// Helpers for read models taking over a snapshot's state.

/** Empties `target` and fills it with what `source` holds (a read model whose collections are fixed). */
export function refill<K, V>(target: Map<K, V>, source: ReadonlyMap<K, V>): void;
export function refill<T>(target: Set<T>, source: ReadonlySet<T>): void;
export function refill(target: Map<unknown, unknown> | Set<unknown>, source: ReadonlyMap<unknown, unknown> | ReadonlySet<unknown>): void {
  target.clear();
  if (target instanceof Map) for (const [key, value] of source as ReadonlyMap<unknown, unknown>) target.set(key, value);
  else for (const value of source as ReadonlySet<unknown>) target.add(value);
}
