import type { Metrics } from '../metrics.js';
import type { EventStore } from './port.js';
import { type AppendObserver, isStoreFailure } from './writeHealth.js';

/** Counts the events this node appends and the appends the store fails, around any adapter. */
export function instrumentedStore(store: EventStore, metrics: Pick<Metrics, 'eventsAppended' | 'storeAppendFailures'>, health?: AppendObserver): EventStore {
  return {
    async append(streamName, events, options) {
      try {
        const result = await store.append(streamName, events, options);
        metrics.eventsAppended.inc(events.length);
        health?.appendSucceeded();
        return result;
      } catch (error) {
        if (isStoreFailure(error)) {
          metrics.storeAppendFailures.inc();
          health?.appendFailed(error);
        }
        throw error;
      }
    },
    readStream: (streamName) => store.readStream(streamName),
    readAll: (options) => store.readAll(options),
    subscribeToAll: (options) => store.subscribeToAll(options),
    headPosition: () => store.headPosition(),
    deleteStreams: (streamNames) => store.deleteStreams(streamNames),
    beat: (mine, forget) => store.beat(mine, forget),
    close: () => store.close(),
  };
}
