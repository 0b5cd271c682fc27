// A transparent HTTP proxy that can spoil one path at a time. Between the service and the
// community simulator: the simulator's own failNext() hits the next request whatever its path, and
// every admin operation starts with the user lookup, so it can only fail the lookup; this fails the
// write that follows it (an HTTP 500, garbage, a delay past the timeout, or the platform going away
// between the lookup and the write). Between a client and the service: a reverse proxy's HTML 502,
// or an answer lost on the way back, after the service did the work or while it still does.
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | { kind: 'http500' }
  /** What nginx answers when it cannot reach a node: an HTML 502 page, the request not forwarded. */
  | { kind: 'badGateway' }
  | { kind: 'garbage' }
  /** Forwarded after `ms` (it still takes effect, as a slow platform's write would). */
  | { kind: 'delay'; ms: number }
  /** This request is answered normally, then the proxy stops listening: later connections are refused. */
  | { kind: 'goDownAfter' }
  /** Forwarded; once the whole answer has come back the client's connection is cut instead of answered. */
  | { kind: 'loseAnswer' }
  /** Forwarded; the client's connection is cut after `ms`, while the target still works on it (its answer is dropped). */
  | { kind: 'cutAfter'; ms: number };

export interface FaultProxy {
  url: string;
  /** Where requests go; set once the simulator is up. */
  target: string | undefined;
  /** The next request for `path` (e.g. '/user/edit/points') meets this fault. */
  failNext(path: string, fault: Fault): void;
  /** Requests seen per path, spoiled ones included. */
  calls(path: string): number;
  /** The headers of the requests seen for `path`, oldest first. */
  headers(path: string): IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startFaultProxy(): Promise<FaultProxy> {
  const faults = new Map<string, Fault[]>();
  const counts = new Map<string, number>();
  const seen = new Map<string, IncomingHttpHeaders[]>();
  const agent = new Agent({ keepAlive: false });
  const timers = new Set<NodeJS.Timeout>();
  let listening = true;

  function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, closeAfter: boolean, loseAnswer = false) {
    const target = new URL(req.url ?? '/', proxy.target);
    const outgoing = request(target, { method: req.method, headers: { ...req.headers, host: target.host }, agent }, (answer) => {
      if (loseAnswer || res.destroyed) {
        answer.resume();
        answer.on('end', () => res.destroy());
        return;
      }
      const headers = { ...answer.headers };
      if (closeAfter) headers.connection = 'close';
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
    });
    outgoing.on('error', () => res.destroy());
    outgoing.end(body);
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://proxy').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    seen.set(path, [...(seen.get(path) ?? []), req.headers]);
    const fault = faults.get(path)?.shift();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      switch (fault?.kind) {
        case 'http500':
          res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>500 Internal Server Error</h1>');
          return;
        case 'badGateway':
          res
            .writeHead(502, { 'content-type': 'text/html' })
            .end('<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n');
          return;
        case 'garbage':
          res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>维护中 {"code":');
          return;
        case 'delay': {
          const timer = setTimeout(() => {
            timers.delete(timer);
            forward(req, res, body, false);
          }, fault.ms);
          timers.add(timer);
          return;
        }
        case 'loseAnswer':
          forward(req, res, body, false, true);
          return;
        case 'cutAfter': {
          forward(req, res, body, false);
          const timer = setTimeout(() => {
            timers.delete(timer);
            res.destroy();
          }, fault.ms);
          timers.add(timer);
          return;
        }
        case 'goDownAfter':
          // Stop accepting first, so the service's next connection is surely refused.
          listening = false;
          server.close();
          forward(req, res, body, true);
          return;
        default:
          forward(req, res, body, false);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    target: undefined,
    failNext(path, fault) {
      faults.set(path, [...(faults.get(path) ?? []), fault]);
    },
    calls: (path) => counts.get(path) ?? 0,
    headers: (path) => [...(seen.get(path) ?? [])],
    async close() {
      for (const timer of timers) clearTimeout(timer);
      agent.destroy();
      server.closeAllConnections();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
