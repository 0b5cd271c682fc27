// Real HTTP servers on loopback ports for the SDK's tests: each records what reached it and
// answers as told. Two of them are two origins (the port is part of an origin).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fetch } from '@community-bridge/sdk';

/** What a test server keeps of a request body, at most. */
const MAX_BODY_BYTES = 64 * 1024;

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Responder = (request: Received, res: ServerResponse, index: number) => void;

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function startScriptedServer(respond: Responder = (_req, res) => json(res, 200, { code: 0, msg: 'success' })): Promise<ScriptedServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(request);
      respond(request, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** A key of the form the service issues (`keys create`), which no service knows. */
export const wellFormedKey = (): string => `cbk_${randomBytes(20).toString('base64url')}`;

/** The global fetch, counting its calls (a failure fetch raises itself, before sending, counts too). */
export function countingFetch(): { fetch: Fetch; calls: () => number } {
  let calls = 0;
  return {
    fetch: (url, init) => {
      calls++;
      return fetch(url, init);
    },
    calls: () => calls,
  };
}
