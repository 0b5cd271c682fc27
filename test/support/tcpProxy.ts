// A TCP proxy of the test's own between a node and its database, to cut the node off as a network
// would: `blackHole()` stops forwarding in both directions on every connection while every socket
// stays open (what each side sent waits in the proxy, as it would in a dead link), `restore()`
// delivers it and forwards again. `onNext` runs a step the moment a chunk the node sends matches a
// pattern (an append on its way), right after the proxy forwarded it (or, `before`, just before:
// a connection held then holds the chunk too), and hands it that connection, which it may hold
// alone.
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface ProxiedConnection {
  /** Stops forwarding on this connection, both ways; the sockets stay open. */
  hold(): void;
  /** Delivers what was held and forwards again. */
  release(): void;
}

export interface TcpProxy {
  port: number;
  /** The proxy's own ports toward the server: what the server sees as the node's client ports. */
  upstreamPorts(): number[];
  /** The next chunk from the node that matches `pattern` is forwarded, then `then` runs (`before`: the other way round). */
  onNext(pattern: RegExp, then: (connection: ProxiedConnection) => void, options?: { before?: boolean }): void;
  blackHole(): void;
  restore(): void;
  close(): Promise<void>;
}

class Pair implements ProxiedConnection {
  private holding = false;
  /** Chunks held, in order, with the socket each goes to. */
  private readonly held: Array<{ to: Socket; chunk: Buffer }> = [];

  constructor(
    readonly downstream: Socket,
    readonly upstream: Socket,
  ) {}

  forward(to: Socket, chunk: Buffer): void {
    if (this.holding) this.held.push({ to, chunk });
    else if (!to.destroyed) to.write(chunk);
  }

  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    for (const { to, chunk } of this.held.splice(0)) if (!to.destroyed) to.write(chunk);
  }

  destroy(): void {
    this.downstream.destroy();
    this.upstream.destroy();
  }
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const triggers: Array<{ pattern: RegExp; then: (connection: ProxiedConnection) => void; before: boolean }> = [];
  let blackHoled = false;

  const server = createServer((downstream) => {
    const pair = new Pair(downstream, connect(target));
    if (blackHoled) pair.hold();
    pairs.add(pair);
    downstream.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      const hit = triggers.findIndex((t) => t.pattern.test(text));
      const trigger = hit >= 0 ? triggers.splice(hit, 1)[0] : undefined;
      if (trigger?.before) trigger.then(pair);
      pair.forward(pair.upstream, chunk);
      if (trigger && !trigger.before) trigger.then(pair);
    });
    pair.upstream.on('data', (chunk: Buffer) => pair.forward(downstream, chunk));
    const end = () => {
      pairs.delete(pair);
      pair.destroy();
    };
    for (const socket of [downstream, pair.upstream]) {
      socket.on('close', end);
      socket.on('error', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    upstreamPorts: () => [...pairs].map((p) => p.upstream.localPort).filter((port): port is number => port !== undefined),
    onNext: (pattern, then, options = {}) => void triggers.push({ pattern, then, before: options.before === true }),
    blackHole() {
      blackHoled = true;
      for (const pair of pairs) pair.hold();
    },
    restore() {
      blackHoled = false;
      for (const pair of pairs) pair.release();
    },
    async close() {
      for (const pair of pairs) pair.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
