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
