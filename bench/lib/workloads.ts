// What the load generators send. Requests go round-robin over the users (one counter shared by
// every connection of a generator), so concurrent requests name different users: no artificial
// coalescing of user lookups, and no artificial write conflicts on one VIP stream.
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { benchOid } from './users.js';

export type WorkloadName = 'vip-submit' | 'vip-read' | 'points-edit' | 'points-direct' | 'push-one';

export interface WorkloadOptions {
  users: number;
  apiKey?: string;
}

export interface Workload {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Path and body of the i-th request. */
  request(i: number): { path: string; body?: string };
}

export function workload(name: WorkloadName, { users, apiKey = '' }: WorkloadOptions): Workload {
  const json = { 'content-type': 'application/json' };
  const oId = (i: number) => benchOid(i % users);
  switch (name) {
    case 'vip-submit':
      return {
        method: 'POST',
        headers: { ...json, apikey: apiKey },
        request: (i) => ({
          path: '/adm/vip/submit',
          // Alternating qualities: each user holds both records, so most submits are renewals.
          body: JSON.stringify({ oId: oId(i), quality: Math.floor(i / users) % 2 === 0 ? 'vip' : 'svip', expired: '2030-01-01 00:00:00' }),
        }),
      };
    case 'vip-read':
      return { method: 'GET', headers: { apikey: apiKey }, request: (i) => ({ path: `/adm/vip/${oId(i)}` }) };
    case 'points-edit':
      return {
        method: 'POST',
        headers: { ...json, apikey: apiKey },
        request: (i) => ({ path: '/adm/points/edit', body: JSON.stringify({ oId: oId(i), point: 1, memo: 'bench' }) }),
      };
    case 'points-direct':
      // The same call the service makes for /adm/points/edit, straight to the platform.
      return {
        method: 'POST',
        headers: { ...json, 'user-agent': 'community-bridge-bench' },
        request: (i) => ({
          path: '/user/edit/points',
          body: JSON.stringify({ userName: `bench${i % users}`, point: 1, memo: 'bench', goldFingerKey: SIMULATOR_KEY }),
        }),
      };
    case 'push-one':
      // A 1:1 push; `t` (when it was built, just before it is sent) lets clients time delivery.
      return {
        method: 'POST',
        headers: { ...json, apikey: apiKey },
        request: (i) => ({
          path: '/adm/message/push',
          body: JSON.stringify({ oIds: [oId(i)], name: 'bench', data: { kind: 'one', seq: i, t: performance.timeOrigin + performance.now() } }),
        }),
      };
  }
}
