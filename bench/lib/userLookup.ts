// The user sync the spec requires on every admin request, as the floors do it: one lookup of the
// user on the platform (GET /api/user/getInfoById?userId=<oId>) over keep-alive sockets of an
// undici Pool, the kind of client the service's fishpi adapter uses.
import { Pool } from 'undici';

// The platform answers 418 to a request without a User-Agent, as fishpi.cn does.
const LOOKUP_HEADERS = { accept: 'application/json', 'user-agent': 'community-bridge-bench-floor' };

export interface UserLookup {
  /** True when the platform knows the user. */
  lookUp(oId: string): Promise<boolean>;
  close(): Promise<void>;
}

export function userLookup(simUrl: string): UserLookup {
  const platform = new Pool(new URL(simUrl).origin);
  return {
    async lookUp(oId) {
      const { statusCode, body } = await platform.request({ method: 'GET', path: `/api/user/getInfoById?userId=${encodeURIComponent(oId)}`, headers: LOOKUP_HEADERS });
      if (statusCode !== 200) {
        await body.dump();
        return false;
      }
      const answer = (await body.json()) as { code?: unknown; data?: { userName?: unknown } };
      return answer.code === 0 && typeof answer.data?.userName === 'string';
    },
    close: () => platform.destroy(),
  };
}
