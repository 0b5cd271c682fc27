// A token bucket per key (a client address, or one key for the whole node), bounded in the keys
// it remembers: an anonymous visitor can make it forget a key (which then starts full again),
// never grow it.

export interface Rate {
  /** Requests per second a key may sustain. */
  perSecond: number;
  /** Requests a key may send at once after a quiet spell. */
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly rate: Rate,
    /** Keys remembered at most; past it the one seen longest ago is forgotten. */
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes a token for `key` at `nowMs`: 0 when it had one, else the whole seconds until it has. */
  take(key: string, nowMs: number): number {
    const { perSecond, burst } = this.rate;
    const bucket = this.buckets.get(key);
    // Deleted and set again, so that the map's order is the order keys were last seen.
    if (bucket) this.buckets.delete(key);
    else if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    const tokens = bucket ? Math.min(burst, bucket.tokens + ((nowMs - bucket.at) / 1000) * perSecond) : burst;
    const taken = tokens >= 1;
    this.buckets.set(key, { tokens: taken ? tokens - 1 : tokens, at: nowMs });
    return taken ? 0 : Math.ceil((1 - tokens) / perSecond);
  }

  get size(): number {
    return this.buckets.size;
  }
}
