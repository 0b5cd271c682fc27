// One app's share of a node's pushes, in recipients per second: a push's work grows with the
// users it names, so one app pushing at the largest size as fast as it is answered would take the
// event loop every other app's requests share. A token bucket per app (PUSH_RECIPIENTS_PER_SECOND,
// full at one push of the largest size), checked before a push's body is read, so a refusal
// costs a map lookup: a push is let in while the bucket is not in debt and takes, at once, the
// most recipients its Content-Length can hold (so that pushes arriving together cannot all pass
// a full bucket); once its body is validated it gives back what it did not name, and a push
// refused for its body gives it all back.
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { RateLimitedError } from '../errors.js';
import type { AuthState } from './apiKey.js';

export interface RecipientRate {
  /** Recipients one app may push per second on a node. */
  perSecond: number;
  /** What a bucket holds when full, and the most one push takes: the largest push. */
  burst: number;
}

/** The fewest bytes a recipient takes in a body: `"1",`. */
const MIN_BYTES_PER_RECIPIENT = 4;

interface Bucket {
  tokens: number;
  at: number;
}

export class RecipientBudget {
  /** By app id: only apps with a valid key reach it, so it holds one entry per app that pushed. */
  private readonly buckets = new Map<string, Bucket>();
  /** What each admitted request took, until its recipients are counted. */
  private readonly taken = new WeakMap<IncomingMessage, { appId: string; recipients: number }>();

  constructor(
    private readonly rate: RecipientRate,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Refuses the app's push while its bucket is in debt, else takes the most its body can name until it is counted. */
  readonly gate: Middleware<AuthState> = async (ctx, next) => {
    const { appId } = ctx.state.actor;
    const bucket = this.refill(appId);
    if (bucket.tokens < 0) {
      const wait = Math.max(1, Math.ceil(-bucket.tokens / this.rate.perSecond));
      throw new RateLimitedError(`Too many recipients: this app may push to ${this.rate.perSecond} per second on this node (PUSH_RECIPIENTS_PER_SECOND)`, wait);
    }
    const length = ctx.request.length;
    const recipients = length === undefined ? this.rate.burst : Math.min(this.rate.burst, Math.ceil(length / MIN_BYTES_PER_RECIPIENT));
    bucket.tokens -= recipients;
    this.taken.set(ctx.req, { appId, recipients });
    try {
      await next();
    } finally {
      // Never counted (refused for its body, or failed before): it named nobody.
      this.settle(ctx.req, 0);
    }
  };

  /** The push's body named `recipients`: what the gate took beyond them goes back. */
  settle(req: IncomingMessage, recipients: number): void {
    const taken = this.taken.get(req);
    if (!taken) return;
    this.taken.delete(req);
    this.refill(taken.appId).tokens += taken.recipients - recipients;
  }

  private refill(appId: string): Bucket {
    const at = this.now();
    const bucket = this.buckets.get(appId) ?? { tokens: this.rate.burst, at };
    bucket.tokens = Math.min(this.rate.burst, bucket.tokens + ((at - bucket.at) / 1000) * this.rate.perSecond);
    bucket.at = at;
    this.buckets.set(appId, bucket);
    return bucket;
  }
}
