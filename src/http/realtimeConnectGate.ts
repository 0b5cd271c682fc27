// Realtime connects are bounded in rate, not only in number held: each anonymous connect and
// close writes two events to the log (other nodes must find the client), kept until
// ANONYMOUS_RETENTION_MS after it ends, so connecting and leaving in a loop would grow the log and
// the node's memory at the rate the node accepts connects. Per client address
// (REALTIME_CONNECTS_PER_SECOND after a burst of REALTIME_CONNECTS_BURST: 429) and per node
// (REALTIME_CONNECTS_PER_NODE_PER_SECOND: 503), before koa sees the request (rateGate.ts), so
// what an address or the node leaves in the log is bounded by rate × retention.
import type { IncomingMessage } from 'node:http';
import type { ErrorAnswer } from '../contract/answers.js';
import { isRealtimeStreamUrl } from './api/realtime.js';
import type { ClientAddressing } from './clientAddress.js';
import { rateGate, type Bound, type GateRates } from './rateGate.js';

export type RealtimeConnectRates = GateRates;

const MESSAGES: Record<Bound, string> = {
  address: 'Too many realtime connects from this address: reconnect after Retry-After seconds',
  node: 'This node takes no more realtime connects this second: reconnect in a moment, possibly to another node',
};

function refusal(wait: number, bound: Bound) {
  const answer: ErrorAnswer =
    bound === 'address'
      ? { status: 429, data: { reason: 'too_many_connections', retryAfterSeconds: wait } }
      : { status: 503, data: { reason: 'unavailable', retryAfterSeconds: wait } };
  return {
    status: answer.status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Retry-After': String(wait) },
    body: JSON.stringify({ code: answer.status, message: MESSAGES[bound], data: answer.data }),
  };
}

export function realtimeConnectGate(options: { rates: RealtimeConnectRates; addressing: ClientAddressing; onRefused(bound: Bound): void; now?: () => number }) {
  return rateGate({ ...options, applies: (req: IncomingMessage) => req.method === 'GET' && isRealtimeStreamUrl(req.url), refusal });
}
