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

/**
 * Two VIP records (svip and vip) per bench user, keyed by oId, as the service answers them on
 * GET /adm/vip/:oId once both were granted: what the read baselines hold in memory.
 */
export function benchVipRecords(count: number): Map<string, object[]> {
  const at = '2026-01-01 00:00:00.000Z';
  const records = new Map<string, object[]>();
  for (const [i, user] of benchUsers(count).entries()) {
    const userId = `u${String(i).padStart(14, '0')}`;
    records.set(
      user.oId,
      ['svip', 'vip'].map((quality, q) => ({ id: `r${String(i * 2 + q).padStart(14, '0')}`, userId, quality, expired: '2030-01-01 00:00:00.000Z', created: at, updated: at })),
    );
  }
  return records;
}
