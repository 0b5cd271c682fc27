// Login pages and sign-in callbacks are what an anonymous visitor can ask for that costs the
// node real work (a store read, hashes, a signed state) on the event loop every admin write
// shares. They are bounded twice, before koa sees the request, so a refusal costs a map lookup
// and a prepared answer, sent a second late: per client address (a flood from one address, or one
// IPv6 network: src/http/clientAddress.ts), and per node (a flood
// spread over many addresses, which the node cannot tell from players: sign-in pages are shed
// so that the admin API keeps its latency). Realtime streams have their own bounds.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tooManySignInPages } from './pages/signIn.js';
import { TokenBuckets, type Rate } from './tokenBuckets.js';
import { clientGroup, type ClientAddressing } from './clientAddress.js';

export interface SignInPageRates {
  /** Per client address; undefined: no bound. */
  perAddress: Rate | undefined;
  /** For the whole node; undefined: no bound. */
  perNode: Rate | undefined;
}

export interface SignInPageGateOptions {
  /** Exact paths of the pages it bounds (the query aside). */
  paths: readonly string[];
  rates: SignInPageRates;
  /** Where the client address comes from, and how IPv6 addresses are grouped. */
  addressing: ClientAddressing;
  onRefused(bound: 'address' | 'node'): void;
  now?: () => number;
}

const NODE = 'node';
/**
 * A refusal is answered this late: a flood that sends one request at a time per connection (as
 * browsers and most flooding tools do) then gets one page a second per connection, instead of
 * as many refusals as the node can write.
 */
const REFUSAL_DELAY_MS = 1000;
/** Distinct refusal pages kept built (one per wait in seconds). */
const MAX_CACHED_REFUSALS = 64;
/** Refusals held at once at most; past it they are answered at once, so holding pins no memory. */
const MAX_HELD_REFUSALS = 1000;

/** A function that answers 429 itself, and says so, for a sign-in page past a bound. */
export function signInPageGate({ paths, rates, addressing, onRefused, now = () => performance.now() }: SignInPageGateOptions) {
  const bounded = new Set(paths);
  const addresses = rates.perAddress && new TokenBuckets(rates.perAddress);
  const node = rates.perNode && new TokenBuckets(rates.perNode, 1);
  let held = 0;
  // A flood meets the same few waits over and over: each refusal is built once.
  const refusals = new Map<number, ReturnType<typeof tooManySignInPages>>();
  const refusalFor = (wait: number) => {
    let refusal = refusals.get(wait);
    if (!refusal) {
      const page = tooManySignInPages(wait);
      refusal = { ...page, headers: { ...page.headers, 'Content-Length': String(Buffer.byteLength(page.html)) } };
      if (refusals.size < MAX_CACHED_REFUSALS) refusals.set(wait, refusal);
    }
    return refusal;
  };
  return function refused(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    if (!bounded.has(query < 0 ? url : url.slice(0, query))) return false;
    const at = now();
    // The address first: one address's flood does not spend the node's share.
    const addressWait = addresses?.take(clientGroup(req, addressing), at) ?? 0;
    const wait = addressWait || (node?.take(NODE, at) ?? 0);
    if (wait === 0) return false;
    onRefused(addressWait ? 'address' : 'node');
    const { status, headers, html } = refusalFor(wait);
    const answer = () => {
      held--;
      res.writeHead(status, headers);
      res.end(html);
    };
    held++;
    if (held > MAX_HELD_REFUSALS) answer();
    else setTimeout(answer, REFUSAL_DELAY_MS);
    return true;
  };
}
