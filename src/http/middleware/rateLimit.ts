// Per-key token bucket (off unless RATE_LIMIT_PER_SECOND is set). Runs in an admin route's chain after the key check, keyed
// by the key's id. Each node keeps its own buckets: the limit is per node.
import type { Middleware } from 'koa';
import { RateLimitedError } from '../errors.js';
import type { AuthState } from './apiKey.js';

export interface RateLimit {
  perSecond: number;
  burst: number;
}

export function rateLimitByKey(limit: RateLimit, now: () => number = () => performance.now()): Middleware<AuthState> {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return (ctx, next) => {
    const key = ctx.state.apiKey;
    const t = now();
    const bucket = buckets.get(key.keyId) ?? { tokens: limit.burst, at: t };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + ((t - bucket.at) / 1000) * limit.perSecond);
    bucket.at = t;
    buckets.set(key.keyId, bucket);
    if (bucket.tokens < 1) throw new RateLimitedError(`Too many requests: this key is limited to ${limit.perSecond} per second`, Math.ceil((1 - bucket.tokens) / limit.perSecond));
    bucket.tokens -= 1;
    return next();
  };
}
