// A TCP proxy of the test's own between a node and its database, to cut the node off as a network
// would: `blackHole()` stops forwarding in both directions while every socket stays open (what
// each side sent waits in the proxy, as it would in a dead link), `restore()` delivers it and
// forwards again. `onNext` runs a step the moment a chunk the node sends matches a pattern (an
// append on its way), right after the proxy forwarded it.
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** The proxy's own ports toward the server: what the server sees as the node's client ports. */
  upstreamPorts(): number[];
  /** The next chunk from the node that matches `pattern` is forwarded, then `then` runs. */
  onNext(pattern: RegExp, then: () => void): void;
  blackHole(): void;
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  downstream: Socket;
  upstream: Socket;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const triggers: Array<{ pattern: RegExp; then: () => void }> = [];
  let holding = false;
  /** Chunks held while black-holed, in order, with the socket each goes to. */
  const held: Array<{ to: Socket; chunk: Buffer }> = [];

  const forward = (to: Socket, chunk: Buffer) => {
    if (holding) held.push({ to, chunk });
    else if (!to.destroyed) to.write(chunk);
  };

  const server = createServer((downstream) => {
    const upstream = connect(target);
    const pair = { downstream, upstream };
    pairs.add(pair);
    downstream.on('data', (chunk: Buffer) => {
      forward(upstream, chunk);
      const text = chunk.toString('latin1');
      const hit = triggers.findIndex((t) => t.pattern.test(text));
      if (hit >= 0) triggers.splice(hit, 1)[0]!.then();
    });
    upstream.on('data', (chunk: Buffer) => forward(downstream, chunk));
    const end = () => {
      pairs.delete(pair);
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on('close', end);
    upstream.on('close', end);
    downstream.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    upstreamPorts: () => [...pairs].map((p) => p.upstream.localPort).filter((port): port is number => port !== undefined),
    onNext: (pattern, then) => void triggers.push({ pattern, then }),
    blackHole() {
      holding = true;
    },
    restore() {
      holding = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      for (const { downstream, upstream } of pairs) {
        downstream.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
