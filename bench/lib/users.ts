// The bench's platform users: deterministic, so the simulator (one process) and the load
// generators (other processes) agree on them without talking.
import type { SimulatorUserSeed } from '../../src/community/simulator.js';

export const FIRST_OID = 1_700_000_000_000;

export const benchOid = (i: number) => String(FIRST_OID + i);

export function benchUsers(count: number): SimulatorUserSeed[] {
  return Array.from({ length: count }, (_, i) => ({
    oId: benchOid(i),
    userName: `bench${i}`,
    nickname: `Bench User ${i}`,
    avatar: `https://file.fishpi.cn/avatar/${benchOid(i)}.png`,
    points: 1_000_000,
    items: { checkin1day: 5 },
    liveness: 42.5,
  }));
}
