// Containers for read models whose entries number in the millions on a long log, shaped so that a
// snapshot saves and restores them as a few blocks of bytes instead of one JS value per entry:
// columns of numbers and of strings appended one at a time, and a Map whose restored entries stay
// encoded until first read. A start from a snapshot then builds an index of keys, not every value.

type TypedArray = Float64Array<ArrayBuffer> | Int32Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | Uint8Array<ArrayBuffer>;

/** Numbers in a typed array that grows by doubling. */
export class NumberColumn<T extends TypedArray> {
  private values: T;
  private size: number;

  /** `make`: a typed array of that length; `saved`: what snapshotState() returned. */
  constructor(
    private readonly make: (length: number) => T,
    saved?: T,
  ) {
    this.values = saved ?? make(1024);
    this.size = saved?.length ?? 0;
  }

  get length(): number {
    return this.size;
  }

  at(index: number): number {
    return this.values[index]!;
  }

  push(value: number): void {
    if (this.size === this.values.length) {
      const grown = this.make(Math.max(1024, this.values.length * 2));
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.size++] = value;
  }

  /** A view of the column as it is (serialised before anything is pushed again). */
  snapshotState(): T {
    return this.values.subarray(0, this.size) as T;
  }
}

export interface StringColumnState {
  bytes: Uint8Array;
  /** Where each string ends in `bytes`. */
  ends: Uint32Array<ArrayBuffer>;
}

/** Strings kept as UTF-8 in one growing block, decoded when asked. */
export class StringColumn {
  private bytes: Buffer;
  private used: number;
  private readonly ends: NumberColumn<Uint32Array<ArrayBuffer>>;

  constructor(saved?: StringColumnState) {
    this.bytes = saved ? Buffer.from(saved.bytes.buffer, saved.bytes.byteOffset, saved.bytes.byteLength) : Buffer.allocUnsafe(64 * 1024);
    this.used = saved?.bytes.byteLength ?? 0;
    this.ends = new NumberColumn((n) => new Uint32Array(n), saved?.ends);
  }

  get length(): number {
    return this.ends.length;
  }

  push(value: string): void {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    this.reserve(value.length * 3);
    this.used += this.bytes.write(value, this.used);
    this.ends.push(this.used);
  }

  /** Appends another column's string as it holds it. */
  pushFrom(other: StringColumn, index: number): void {
    const start = other.start(index);
    const end = other.ends.at(index);
    this.reserve(end - start);
    this.used += other.bytes.copy(this.bytes, this.used, start, end);
    this.ends.push(this.used);
  }

  at(index: number): string {
    return this.bytes.toString('utf8', this.start(index), this.ends.at(index));
  }

  snapshotState(): StringColumnState {
    return { bytes: new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.used), ends: this.ends.snapshotState() };
  }

  private start(index: number): number {
    return index === 0 ? 0 : this.ends.at(index - 1);
  }

  private reserve(bytes: number): void {
    if (this.used + bytes <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + bytes));
    this.bytes.copy(grown, 0, 0, this.used);
    this.bytes = grown;
  }
}

/** How a SavedMap writes its values down and reads them back. */
export interface Codec<V> {
  encode(value: V): string;
  decode(text: string): V;
}

/** For values of plain data: objects, arrays, strings, numbers, booleans, null. */
export const jsonCodec: Codec<never> = { encode: JSON.stringify, decode: (text) => JSON.parse(text) as never };

/** For strings. */
export const textCodec: Codec<string> = { encode: (text) => text, decode: (text) => text };

/** For Maps of plain data (their entries, in order). */
export const mapCodec: Codec<Map<string, never>> = { encode: (map) => JSON.stringify([...map]), decode: (text) => new Map(JSON.parse(text)) };

export interface SavedMapState {
  /** The keys one after another, and where each ends (UTF-16 units): restored as slices of one string. */
  keys: string;
  keyEnds: Uint32Array<ArrayBuffer>;
  /** Where each key's value is in `values`. */
  slots: Uint32Array<ArrayBuffer>;
  /** Encoded values; some may be no one's (replaced or deleted since they were encoded). */
  values: StringColumnState;
}

/**
 * A Map by string key whose entries stay encoded until first read once a snapshot has encoded
 * them: a restore indexes the keys and decodes no value, a read decodes its entry once, and a
 * snapshot encodes only the entries read or set since the last one (the others are where it left
 * them). Iterating decodes every entry; the order of entries is not kept.
 *
 * A snapshot drops the decoded entries: one read before it and changed after it must be read
 * again. The read models that use one change their entries only while applying an event, in the
 * same turn as the read.
 */
export class SavedMap<V> {
  /** Entries read or set since the last snapshot (all of them before the first). */
  private readonly live = new Map<string, V>();
  /** Entries as the last snapshot encoded them: key → slot in `encoded` (a live entry overrides its slot). */
  private readonly saved = new Map<string, number>();
  private encoded: StringColumn;

  constructor(
    private readonly codec: Codec<V>,
    state?: SavedMapState,
  ) {
    this.encoded = new StringColumn(state?.values);
    if (state) {
      const { keys, keyEnds, slots } = state;
      for (let i = 0, start = 0; i < keyEnds.length; start = keyEnds[i++]!) this.saved.set(keys.slice(start, keyEnds[i]), slots[i]!);
    }
  }

  get(key: string): V | undefined {
    const value = this.live.get(key);
    if (value !== undefined) return value;
    const slot = this.saved.get(key);
    if (slot === undefined) return undefined;
    const decoded = this.codec.decode(this.encoded.at(slot));
    this.live.set(key, decoded);
    return decoded;
  }

  has(key: string): boolean {
    return this.live.has(key) || this.saved.has(key);
  }

  set(key: string, value: V): this {
    this.live.set(key, value);
    return this;
  }

  delete(key: string): boolean {
    const saved = this.saved.delete(key);
    return this.live.delete(key) || saved;
  }

  values(): IterableIterator<V> {
    this.decodeAll();
    return this.live.values();
  }

  entries(): IterableIterator<[string, V]> {
    this.decodeAll();
    return this.live.entries();
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /**
   * Encodes up to `entries` of the entries read or set since the last snapshot, ahead of the next
   * one (dropping them as a snapshot does); answers whether any is left.
   */
  encodeAhead(entries: number): boolean {
    let encoded = 0;
    for (const [key, value] of this.live) {
      if (encoded++ === entries) return true;
      this.saved.set(key, this.encoded.length);
      this.encoded.push(this.codec.encode(value));
      this.live.delete(key);
    }
    return false;
  }

  /** Every entry encoded; the decoded ones are dropped (see the class comment). */
  snapshotState(): SavedMapState {
    for (const [key, value] of this.live) {
      this.saved.set(key, this.encoded.length);
      this.encoded.push(this.codec.encode(value));
    }
    this.live.clear();
    // Values replaced or deleted since they were encoded: copied out once they are most of the block.
    if (this.encoded.length > 2 * this.saved.size + 1024) this.compact();
    const keys: string[] = [];
    const keyEnds = new Uint32Array(this.saved.size);
    const slots = new Uint32Array(this.saved.size);
    let end = 0;
    for (const [key, slot] of this.saved) {
      keyEnds[keys.length] = end += key.length;
      slots[keys.length] = slot;
      keys.push(key);
    }
    return { keys: keys.join(''), keyEnds, slots, values: this.encoded.snapshotState() };
  }

  private compact(): void {
    const kept = new StringColumn();
    for (const [key, slot] of this.saved) {
      this.saved.set(key, kept.length);
      kept.pushFrom(this.encoded, slot);
    }
    this.encoded = kept;
  }

  private decodeAll(): void {
    for (const key of this.saved.keys()) this.get(key);
  }
}

/** Encodes ahead up to `entries` in the first of `maps` with some left; answers whether any is left in any. */
export function encodeAheadIn(maps: readonly Pick<SavedMap<unknown>, 'encodeAhead'>[], entries: number): boolean {
  for (const map of maps) if (map.encodeAhead(entries)) return true;
  return false;
}
