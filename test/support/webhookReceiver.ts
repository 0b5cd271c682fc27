// A real webhook receiver on a loopback port (node:http): it keeps every request it gets, raw body
// and headers, and answers as the test scripts it (a status, a redirect, or holding the request
// open until released), so a test sees what the service really sent and how often.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  raw: string;
  /** The body parsed: `{id, type, created, app, data}`. */
  event: { id: string; type: string; created: string; app: string; data: Record<string, unknown> };
}

/** How the receiver answers one request. */
export type Reply = { status: number; body?: string; headers?: Record<string, string> } | { hold: true };

export interface WebhookReceiver {
  url: string;
  arrivals: Arrival[];
  /** Arrivals of one event id. */
  of(eventId: string): Arrival[];
  /** The next requests are answered so, in order; after them, `otherwise`. */
  script(...replies: Reply[]): void;
  /** How requests beyond the script are answered (default 200). */
  otherwise(reply: Reply): void;
  /** Answers every held request with 200. */
  release(): void;
  /** How many requests are held open now. */
  held(): number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const arrivals: Arrival[] = [];
  const scripted: Reply[] = [];
  let fallback: Reply = { status: 200, body: 'ok' };
  const holding = new Set<ServerResponse>();
  const answer = (res: ServerResponse, reply: Reply) => {
    if ('hold' in reply) {
      holding.add(res);
      res.on('close', () => holding.delete(res));
      return;
    }
    res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
    res.end(reply.body ?? '');
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      arrivals.push({ path: req.url ?? '', headers: req.headers, raw, event: JSON.parse(raw) });
      answer(res, scripted.shift() ?? fallback);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    of: (eventId) => arrivals.filter((a) => a.event.id === eventId),
    script: (...replies) => void scripted.push(...replies),
    otherwise(reply) {
      fallback = reply;
    },
    release() {
      for (const res of holding) answer(res, { status: 200, body: 'ok' });
      holding.clear();
    },
    held: () => holding.size,
    async close() {
      for (const res of holding) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Checks a `Bridge-Signature` header the way docs/api.md tells receivers to: every `v1=` that is
 * the HMAC-SHA256 of `<t>.<body>` under `secret`. Returns the timestamp when one matches.
 */
export function verifySignature(header: string | string[] | undefined, raw: string, secret: string): number | undefined {
  if (typeof header !== 'string') return undefined;
  const parts = header.split(',').map((part) => part.split('=', 2) as [string, string]);
  const t = parts.find(([name]) => name === 't')?.[1];
  if (t === undefined || !/^\d+$/.test(t)) return undefined;
  const expected = createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex');
  return parts.some(([name, value]) => name === 'v1' && value === expected) ? Number(t) : undefined;
}
