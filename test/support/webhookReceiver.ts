// A real webhook receiver on a loopback port (node:http): it keeps every request it gets, raw body
// and headers, and answers as the test scripts it (a status, a redirect, or holding the request
// open until released), so a test sees what the service really sent and how often.
import { verifyWebhookSignature } from '@community-bridge/sdk';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received, and as text. */
  bytes: Buffer;
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
      const bytes = Buffer.concat(chunks);
      const raw = bytes.toString('utf8');
      arrivals.push({ path: req.url ?? '', headers: req.headers, bytes, raw, event: JSON.parse(raw) });
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
 * Checks a `Bridge-Signature` header as receivers do, with the SDK's verifyWebhookSignature (the
 * verifier docs/api.md gives them): the timestamp when it is authentic under `secret`.
 */
export async function verifySignature(header: string | string[] | undefined, body: Buffer | string, secret: string): Promise<number | undefined> {
  if (typeof header !== 'string') return undefined;
  return verifyWebhookSignature(body, header, secret).catch(() => undefined);
}
