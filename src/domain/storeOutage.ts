// An outage of the event store's appends, as a node saw it: recorded once the store takes an
// append again, so that whoever reads the log about the outage finds when it started and ended.
import type { Decider } from './decider.js';
import type { StoreWritesRecovered } from './events.js';

export type RecordRecovery = { type: 'RecordRecovery' } & StoreWritesRecovered['data'];

export const storeOutageDecider: Decider<null, RecordRecovery, StoreWritesRecovered> = {
  initialState: () => null,
  decide: ({ type: _, ...data }) => [{ type: 'StoreWritesRecovered', data }],
  evolve: (state) => state,
};
