// What the load generators send. Requests go round-robin over the users (one counter shared by
// every connection of a generator), so concurrent requests name different users: no artificial
// coalescing of user lookups, and no artificial write conflicts on one VIP stream.
import { SIMULATOR_KEY } from '../../src/community/simulator.js';
import { benchOid } from './users.js';

export type WorkloadName = 'vip-submit' | 'vip-read' | 'points-edit' | 'points-direct' | 'push-one' | 'push-many' | 'vip-submit-invalid' | 'login-page';

export interface WorkloadOptions {
  users: number;
  apiKey?: string;
  /** Each write carries an Idempotency-Key of its own beginning with this, as an integrator's would. */
  keyPrefix?: string;
  /** login-page: the client_id of a connection the service holds. */
  clientId?: string;
  /** push-many: oIds per push (the bench users first, then oIds nobody has). */
  recipients?: number;
}

export interface Workload {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The status every answer must have (200 unless said). */
  status?: number;
  /** A status that is a refusal by design rather than an error (counted apart, timed like the rest). */
  refusedStatus?: number;
  /** Path, body and headers of its own of the i-th request. */
  request(i: number): { path: string; body?: string; headers?: Record<string, string> };
}

export function workload(name: WorkloadName, { users, apiKey = '', keyPrefix, clientId = '', recipients = 1 }: WorkloadOptions): Workload {
  const json = { 'content-type': 'application/json' };
  const oId = (i: number) => benchOid(i % users);
  const keyed = (i: number) => (keyPrefix === undefined ? {} : { headers: { 'idempotency-key': `${keyPrefix}-${i}` } });
  switch (name) {
    case 'vip-submit':
      return {
        method: 'POST',
        headers: { ...json, apikey: apiKey },
        request: (i) => ({
          path: '/adm/vip/submit',
          // Alternating qualities: each user holds both records, so most submits are renewals.
          body: JSON.stringify({ oId: oId(i), quality: Math.floor(i / users) % 2 === 0 ? 'vip' : 'svip', expired: '2030-01-01 00:00:00' }),
          ...keyed(i),
        }),
      };
    case 'vip-submit-invalid':
      // A quality the API does not know: refused with 400 for its input.
      return {
        method: 'POST',
        headers: { ...json, apikey: apiKey },
        status: 400,
        request: (i) => ({ path: '/adm/vip/submit', body: JSON.stringify({ oId: oId(i), quality: 'gold', expired: '2030-01-01 00:00:00' }), ...keyed(i) }),
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
          ...keyed(i),
        }),
      };
    case 'push-many': {
      // One push to `recipients` oIds, built once: what an app pushing at the service's bound sends.
      // 429 is the bound on one app's pushes in progress, a refusal by design.
      const oIds = JSON.stringify(Array.from({ length: recipients }, (_, j) => benchOid(j)));
      return {
        method: 'POST',
        headers: { ...json, apikey: apiKey },
        refusedStatus: 429,
        request: (i) => ({ path: '/adm/message/push', body: `{"oIds":${oIds},"name":"bench-many","data":{"seq":${i}}}` }),
      };
    }
    case 'login-page':
      // An anonymous visitor opening the login page of a connected client: no cookie, so it is
      // not the browser holding the connection and gets the confirmation page (200), or 429 once
      // its address is past its bound of sign-in pages.
      return {
        method: 'GET',
        headers: { 'user-agent': 'community-bridge-bench-flood' },
        refusedStatus: 429,
        request: () => ({ path: `/fishpi/login?client_id=${encodeURIComponent(clientId)}` }),
      };
  }
}
