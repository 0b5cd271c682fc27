import type { SimulatorUserSeed } from './simulator.js';

/** The users the simulator starts with under `npm run dev` and `npm run simulator`. */
export const DEMO_USERS: SimulatorUserSeed[] = [
  { oId: '1630399136785', userName: 'alice', nickname: 'Alice', points: 1000, liveness: 80.2, items: { checkin1day: 1, patchCheckinCard: 2 } },
  { oId: '1630399136786', userName: 'bob', nickname: 'Bob', points: 250, liveness: 12.5, items: { metalTicket: 1 } },
  { oId: '1630399136787', userName: 'carol', nickname: 'Carol', points: 0, liveness: 0 },
  { oId: '1630399136788', userName: 'dave', nickname: 'Dave', points: 42, liveness: 50, items: { nameCard: 3 } },
];
