// A full garbage collection in another Node process, from outside: the process is started with
// `--inspect=127.0.0.1:<port>` and we ask its inspector for `HeapProfiler.collectGarbage`. This
// needs nothing in src/ (no bench-only signal handler, no `gc()` exposed to the service's code),
// and unlike "wait for a quiet period" it is deterministic: V8 does not promise a full collection
// while a process idles, so RSS after a pause could still hold garbage and read as a leak.
import { createServer } from 'node:net';
import { WebSocket } from 'undici';

/** A loopback TCP port that was free a moment ago (the inspector needs one named up front). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A session with another process's inspector: methods are sent one at a time, in order. */
async function openSession(port: number): Promise<{ call(method: string, params?: object): Promise<unknown>; close(): void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : waiting.get(message.id);
    if (!waiter) return;
    waiting.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve());
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector on port ${port}`)));
  });
  let lastId = 0;
  return {
    call: (method, params) =>
      new Promise((resolve, reject) => {
        const id = ++lastId;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, ...(params && { params }) }));
      }),
    close: () => socket.close(),
  };
}

/** One short inspector session: connect, send each method in turn, collect the results, close. */
async function session(port: number, calls: Array<{ method: string; params?: object }>): Promise<unknown[]> {
  const inspector = await openSession(port);
  try {
    const results: unknown[] = [];
    for (const { method, params } of calls) results.push(await inspector.call(method, params));
    return results;
  } finally {
    inspector.close();
  }
}

/**
 * Starts V8's CPU profiler in the process (sampling every `intervalUs`, as --cpu-prof does) and
 * resolves with a function that stops it and answers the profile, in .cpuprofile form: a profile
 * of a measured run alone, without the process's start-up and warm-up.
 */
export async function startCpuProfile(port: number, intervalUs = 1000): Promise<() => Promise<object>> {
  const inspector = await openSession(port);
  await inspector.call('Profiler.enable');
  await inspector.call('Profiler.setSamplingInterval', { interval: intervalUs });
  await inspector.call('Profiler.start');
  return async () => {
    try {
      return ((await inspector.call('Profiler.stop')) as { profile: object }).profile;
    } finally {
      inspector.close();
    }
  };
}

/**
 * Two full collections (the second frees what finalizers and weak references let go in the
 * first), then the JS heap in use. Resolves with the heap's used and total size in bytes.
 */
export async function collectGarbage(port: number): Promise<{ usedSize: number; totalSize: number }> {
  const results = await session(port, [{ method: 'HeapProfiler.collectGarbage' }, { method: 'HeapProfiler.collectGarbage' }, { method: 'Runtime.getHeapUsage' }]);
  return results[2] as { usedSize: number; totalSize: number };
}
