import type { Metrics } from '../metrics.js';
import type { EventStore } from './port.js';

/** Counts the events this node appends, around any adapter. */
export function instrumentedStore(store: EventStore, metrics: Pick<Metrics, 'eventsAppended'>): EventStore {
  return {
    async append(streamName, events, options) {
      const result = await store.append(streamName, events, options);
      metrics.eventsAppended.inc(events.length);
      return result;
    },
    readStream: (streamName) => store.readStream(streamName),
    readAll: (options) => store.readAll(options),
    subscribeToAll: (options) => store.subscribeToAll(options),
    headPosition: () => store.headPosition(),
    deleteStreams: (streamNames) => store.deleteStreams(streamNames),
    close: () => store.close(),
  };
}
