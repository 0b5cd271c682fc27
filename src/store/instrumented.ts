// Around any adapter: counts the events this node appends and the appends the store fails, and
// turns the store's own failures (anything but the caller's refusals) into StoreUnavailableError,
// which the HTTP layer answers with 503 and Retry-After. An outage is told once when it begins and
// once when a call succeeds again.
import { StoreUnavailableError } from '../domain/errors.js';
import type { Metrics } from '../metrics.js';
import type { EventStore } from './port.js';
import { type AppendObserver, isStoreFailure, type OutageObserver } from './writeHealth.js';

export interface StoreObservers {
  appends?: AppendObserver;
  outages?: OutageObserver;
}

export function instrumentedStore(store: EventStore, metrics: Pick<Metrics, 'eventsAppended' | 'storeAppendFailures'>, observers: StoreObservers = {}): EventStore {
  let failing = false;
  const succeeded = () => {
    if (!failing) return;
    failing = false;
    observers.outages?.ended();
  };
  const failed = (error: unknown): unknown => {
    if (!isStoreFailure(error)) return error;
    if (!failing) {
      failing = true;
      observers.outages?.began(error);
    }
    return error instanceof StoreUnavailableError ? error : new StoreUnavailableError(error);
  };
  const observed = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      const result = await call();
      succeeded();
      return result;
    } catch (error) {
      throw failed(error);
    }
  };
  return {
    async append(streamName, events, options) {
      try {
        const result = await observed(() => store.append(streamName, events, options));
        metrics.eventsAppended.inc(events.length);
        observers.appends?.appendSucceeded();
        return result;
      } catch (error) {
        if (isStoreFailure(error)) {
          metrics.storeAppendFailures.inc();
          observers.appends?.appendFailed(error);
        }
        throw error;
      }
    },
    readStream: (streamName) => observed(() => store.readStream(streamName)),
    readAll: (options) => observed(() => store.readAll(options)),
    subscribeToAll: (options) => store.subscribeToAll(options),
    headPosition: () => observed(() => store.headPosition()),
    deleteStreams: (streamNames) => observed(() => store.deleteStreams(streamNames)),
    beat: (mine, forget) => store.beat(mine, forget),
    ...(store.heldBackMs && { heldBackMs: () => store.heldBackMs!() }),
    close: () => store.close(),
  };
}
