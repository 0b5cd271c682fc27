// A bound on how often anonymous visitors may ask for something that costs the node real work,
// checked in the request listener before koa sees the request, so that a refusal costs a map
// lookup and a prepared answer: per client address (a flood from one address, or one IPv6
// network: src/http/clientAddress.ts), and per node (a flood spread over many addresses, which
// the node cannot tell from real visitors: it sheds what it bounds, so that the admin API keeps
// its latency). Sign-in pages (signInPageGate.ts) and realtime connects (realtimeConnectGate.ts)
// are bounded this way.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientGroup, type ClientAddressing } from './clientAddress.js';
import { TokenBuckets, type Rate } from './tokenBuckets.js';

export interface GateRates {
  /** Per client address; undefined: no bound. */
  perAddress: Rate | undefined;
  /** For the whole node; undefined: no bound. */
  perNode: Rate | undefined;
}

export type Bound = 'address' | 'node';

/** A refusal as it is sent: built once per wait and bound. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RateGateOptions {
  /** Whether the gate bounds this request. */
  applies(req: IncomingMessage): boolean;
  rates: GateRates;
  /** Where the client address comes from, and how IPv6 addresses are grouped. */
  addressing: ClientAddressing;
  /** The answer to a request past `bound`, told to come back in `waitSeconds`. */
  refusal(waitSeconds: number, bound: Bound): Refusal;
  onRefused(bound: Bound): void;
  now?: () => number;
}

const NODE = 'node';
/**
 * A refusal is answered this late: a flood that sends one request at a time per connection (as
 * browsers and most flooding tools do) then gets one refusal a second per connection, instead of
 * as many as the node can write.
 */
const REFUSAL_DELAY_MS = 1000;
/** Distinct refusals kept built (one per wait in seconds and bound). */
const MAX_CACHED_REFUSALS = 64;
/** Refusals held at once at most; past it they are answered at once, so holding pins no memory. */
const MAX_HELD_REFUSALS = 1000;

/** A function that answers a request past a bound itself, and says so. */
export function rateGate({ applies, rates, addressing, refusal, onRefused, now = () => performance.now() }: RateGateOptions) {
  const addresses = rates.perAddress && new TokenBuckets(rates.perAddress);
  const node = rates.perNode && new TokenBuckets(rates.perNode, 1);
  let held = 0;
  // A flood meets the same few waits over and over: each refusal is built once.
  const refusals = new Map<string, Refusal>();
  const refusalFor = (wait: number, bound: Bound) => {
    const key = `${bound}:${wait}`;
    let built = refusals.get(key);
    if (!built) {
      const made = refusal(wait, bound);
      built = { ...made, headers: { ...made.headers, 'Content-Length': String(Buffer.byteLength(made.body)) } };
      if (refusals.size < MAX_CACHED_REFUSALS) refusals.set(key, built);
    }
    return built;
  };
  return function refused(req: IncomingMessage, res: ServerResponse): boolean {
    if (!applies(req)) return false;
    const at = now();
    // The address first: one address's flood does not spend the node's share.
    const addressWait = addresses?.take(clientGroup(req, addressing), at) ?? 0;
    const wait = addressWait || (node?.take(NODE, at) ?? 0);
    if (wait === 0) return false;
    const bound: Bound = addressWait ? 'address' : 'node';
    onRefused(bound);
    const { status, headers, body } = refusalFor(wait, bound);
    const answer = () => {
      held--;
      res.writeHead(status, headers);
      res.end(body);
    };
    held++;
    if (held > MAX_HELD_REFUSALS) answer();
    else setTimeout(answer, REFUSAL_DELAY_MS);
    return true;
  };
}
