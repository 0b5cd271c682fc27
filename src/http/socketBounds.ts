// Bounds on the sockets a node accepts, so that clients that open connections and send little or
// nothing cannot take the node's descriptors from the admin API and the probes:
//
// - in all (HTTP_MAX_CONNECTIONS): below the open-files limit, above the realtime streams' cap,
//   so descriptors stay for the store and the platform client, and sockets for the admin API when
//   the streams are full. Node closes a socket past it as soon as it is accepted.
// - per client address (HTTP_MAX_CONNECTIONS_PER_IP, an IPv6 network counting as one address):
//   one address cannot take them all. Without TRUST_PROXY only: behind a proxy every socket is
//   the proxy's, and the proxy bounds its clients' connections (deploy/nginx.conf's limit_conn).
// - in time: a request's headers must arrive within HTTP_HEADERS_TIMEOUT_MS and the whole request
//   within HTTP_REQUEST_TIMEOUT_MS (Node answers 408 and closes), and a socket that sends nothing
//   at all is closed a moment after HTTP_HEADERS_TIMEOUT_MS (Node's own timeouts start with a head).
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import { addressGroup } from './clientAddress.js';

export interface SocketBounds {
  /** Sockets the node holds at most. */
  maxConnections: number;
  /** Sockets one client address (IPv6: network) holds at most; undefined: no bound (behind a proxy). */
  maxConnectionsPerAddress: number | undefined;
  ipv6PrefixLength: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/** How often Node looks for requests past their timeouts (its default, 30 s, would let one last 40 s). */
const TIMEOUT_CHECK_MS = 1000;

/** The options of `createServer` that hold requests to their timeouts. */
export function timeoutOptions({ headersTimeoutMs, requestTimeoutMs }: SocketBounds): ServerOptions {
  return { headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, headersTimeoutMs) };
}

/** Applies the bounds to a server made with `timeoutOptions`; `onRefused` hears of each socket refused. */
export function boundSockets(server: Server, bounds: SocketBounds, onRefused: (bound: 'address' | 'node') => void): void {
  server.maxConnections = bounds.maxConnections;
  server.on('drop', () => onRefused('node'));
  const byAddress = new Map<string, number>();
  /** The address each counted socket counts under, until it closes. */
  const counted = new Map<Socket, string>();
  /** Sockets that have not sent a whole request head yet, with when each was accepted, oldest first. */
  const silent = new Map<Socket, number>();
  // Later than Node's own check of a head begun, which answers 408: this one is for sockets that
  // send nothing.
  const silentMs = bounds.headersTimeoutMs + 2 * TIMEOUT_CHECK_MS;
  // One sweep for every socket, and one close listener shared by all: a timer or a closure per
  // socket would stay with it for its whole life (Node keeps a socket's timer once cleared), and a
  // realtime stream's socket lives for hours.
  const sweep = setInterval(() => {
    const acceptedBefore = performance.now() - silentMs;
    for (const [socket, accepted] of silent) {
      if (accepted > acceptedBefore) break;
      silent.delete(socket);
      socket.destroy();
    }
  }, TIMEOUT_CHECK_MS);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
  function closed(this: Socket): void {
    silent.delete(this);
    const address = counted.get(this);
    if (address === undefined) return;
    counted.delete(this);
    const left = (byAddress.get(address) ?? 1) - 1;
    if (left > 0) byAddress.set(address, left);
    else byAddress.delete(address);
  }
  server.on('connection', (socket: Socket) => {
    const { maxConnectionsPerAddress: perAddress } = bounds;
    if (perAddress !== undefined) {
      const address = addressGroup(socket.remoteAddress ?? '', bounds.ipv6PrefixLength);
      const held = byAddress.get(address) ?? 0;
      if (held >= perAddress) {
        onRefused('address');
        socket.destroy();
        return;
      }
      byAddress.set(address, held + 1);
      counted.set(socket, address);
    }
    silent.set(socket, performance.now());
    socket.on('close', closed);
  });
  server.on('request', ({ socket }) => {
    // Its first request has come: from here on Node's own request and keep-alive timeouts apply.
    silent.delete(socket as Socket);
  });
}
