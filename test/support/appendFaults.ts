import type { EventStore, EventToAppend } from '../../src/store/port.js';

/**
 * Makes every append carrying an event of this type fail, as a full disk would, until the
 * returned undo. Works on the store object the service's parts share.
 */
export function failAppendsOf(store: EventStore, type: string): () => void {
  const append = store.append;
  store.append = (stream: string, events: EventToAppend[], options) =>
    events.some((e) => e.type === type) ? Promise.reject(new Error('SQLITE_FULL: database or disk is full')) : append(stream, events, options);
  return () => {
    store.append = append;
  };
}

/**
 * Holds back the first append carrying an event of this type, as a process stalled just before
 * it would be, until `release()`; then lets it go on to the store as it was.
 */
export function holdFirstAppendOf(store: EventStore, type: string): { held: Promise<void>; release(): void } {
  const append = store.append;
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = new Promise<void>((resolve) => (reached = resolve));
  store.append = async (stream: string, events: EventToAppend[], options) => {
    if (!events.some((e) => e.type === type)) return append(stream, events, options);
    store.append = append;
    reached();
    await gate;
    return append(stream, events, options);
  };
  return { held, release };
}
