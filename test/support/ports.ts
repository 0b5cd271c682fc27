import { createServer } from 'node:net';

/**
 * A loopback port free right now, for a server whose address must be known before it listens
 * (a CORS origin, a child process, a service still catching up).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
