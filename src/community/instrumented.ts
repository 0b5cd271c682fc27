// Counts and times every platform call by endpoint and outcome, around any adapter.
import { PlatformRejectedError, PlatformTimeoutError } from '../domain/errors.js';
import type { Metrics } from '../metrics.js';
import type { CommunityPlatform } from './port.js';

const CALLS = ['getUser', 'editPoints', 'giveMedal', 'removeMedal', 'queryItems', 'editItems', 'liveness', 'verifyAssertion'] as const;

function outcomeOf(error: unknown): string {
  if (error instanceof PlatformRejectedError) return 'rejected';
  if (error instanceof PlatformTimeoutError) return 'timeout';
  return 'failed';
}

export function instrumentedPlatform(platform: CommunityPlatform, metrics: Pick<Metrics, 'platformDuration'>): CommunityPlatform {
  const timed = Object.fromEntries(
    CALLS.map((endpoint) => [
      endpoint,
      async (...args: unknown[]) => {
        const started = performance.now();
        let outcome = 'ok';
        try {
          return await (platform[endpoint] as (...a: unknown[]) => Promise<unknown>).apply(platform, args);
        } catch (error) {
          outcome = outcomeOf(error);
          throw error;
        } finally {
          metrics.platformDuration.observe({ endpoint, outcome }, (performance.now() - started) / 1000);
        }
      },
    ]),
  );
  return {
    ...(timed as Pick<CommunityPlatform, (typeof CALLS)[number]>),
    openIdLoginUrl: (request) => platform.openIdLoginUrl(request),
    openIdEndpoint: platform.openIdEndpoint,
    identityPattern: platform.identityPattern,
    close: () => platform.close(),
  };
}
