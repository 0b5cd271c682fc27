// Login pages and sign-in callbacks are what an anonymous visitor can ask for that costs the
// node real work (a store read, hashes, a signed state) on the event loop every admin write
// shares. They are bounded per client address and per node before koa sees them (rateGate.ts),
// refused with a page a second late. Realtime streams have their own bounds.
import type { IncomingMessage } from 'node:http';
import type { ClientAddressing } from './clientAddress.js';
import { tooManySignInPages } from './pages/signIn.js';
import { rateGate, type Bound, type GateRates } from './rateGate.js';

export type SignInPageRates = GateRates;

export interface SignInPageGateOptions {
  /** Exact paths of the pages it bounds (the query aside). */
  paths: readonly string[];
  rates: SignInPageRates;
  addressing: ClientAddressing;
  onRefused(bound: Bound): void;
  now?: () => number;
}

/** A function that answers 429 itself, and says so, for a sign-in page past a bound. */
export function signInPageGate({ paths, ...options }: SignInPageGateOptions) {
  const bounded = new Set(paths);
  const applies = (req: IncomingMessage) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    return bounded.has(query < 0 ? url : url.slice(0, query));
  };
  return rateGate({
    ...options,
    applies,
    refusal: (wait) => {
      const { status, headers, html } = tooManySignInPages(wait);
      return { status, headers, body: html };
    },
  });
}
