// SSE client worker (its own process, driven over IPC by the SSE scenarios). Holds thousands of
// raw node:http connections (no EventSource) and parses frames minimally. `localAddress` binds
// its sockets to a loopback source address (127.0.0.x) when one destination's ~28,000 ephemeral
// ports would not do; by default it stays unset, because an explicit bind() makes the kernel
// search for a free port on every connect (measured: 2,000 connects took 7.6 s bound, 1.7 s not).
//
// Commands (IPC `{type, …}`), each answered by one message of type `<type>:done`:
// - open      {count, concurrency}: anonymous connections to /api/realtime; answers when every
//             one got its PB_CONNECT frame (connect times, failures).
// - signin    {oIds, perUser, concurrency}: per user, one connection, the real sign-in (login page
//             → the platform's OpenID page with `sim_user` → callback → session cookie), the
//             `login` frame on that connection, then perUser-1 more connections with the cookie.
// - baseline  {oIds, perUser, concurrency}: connections to the bare broadcaster (`?oId=`).
// - reset     {}: forgets the message latencies and the heartbeats counted so far.
// - stats     {keepLatencies}: messages counted, their latencies (ms, push sent → frame parsed),
//             the open connections that got no heartbeat since the reset and the fewest any got.
// - close     {}: closes every connection.
import { request, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

interface Options {
  url: string;
  /** Loopback address to bind the client side of every connection to (127.0.0.x), or ''. */
  localAddress: string;
  communityName: string;
}

const options = JSON.parse(process.argv[2]!) as Options;
const target = new URL(options.url);
const now = () => performance.timeOrigin + performance.now();

interface Connection {
  res: IncomingMessage | undefined;
  clientId?: string;
  loginStatus?: boolean;
  /** `cb_client=…`: the browser binding the stream set, which the login page checks. */
  binding?: string;
  onFrame?: (event: string, data: string) => void;
  /** Heartbeats (comment frames) since the last `reset`. */
  heartbeats: number;
}

const connections = new Set<Connection>();
let latencies: number[] = [];
let messages = 0;
let lastMessageAt = 0;
let unexpectedCloses = 0;
let closing = false;

function handleFrame(connection: Connection, frame: string): void {
  let event = 'message';
  let data = '';
  for (const line of frame.split('\n')) {
    if (line.startsWith('data: ')) data = line.slice(6);
    else if (line.startsWith('event: ')) event = line.slice(7);
  }
  if (!data) {
    connection.heartbeats++; // a comment: the heartbeat
    return;
  }
  if (event === 'message') {
    messages++;
    lastMessageAt = now();
    // The pushed data carries `t`, when the push was sent (ms since the epoch, sub-ms precision).
    const t = /"t":([0-9.]+)/.exec(data);
    if (t) latencies.push(now() - Number(t[1]));
  }
  connection.onFrame?.(event, data);
}

/** Opens one SSE connection; resolves with it once the first (PB_CONNECT) frame arrived. */
function connect(path: string, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const connection: Connection = { res: undefined, heartbeats: 0 };
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(error);
    };
    const timer = setTimeout(() => {
      fail(new Error(`no PB_CONNECT within ${timeoutMs} ms`));
      req.destroy();
    }, timeoutMs);
    connection.onFrame = (event, data) => {
      if (settled) return;
      if (event !== 'PB_CONNECT') return fail(new Error(`first frame was ${event}`));
      const parsed = JSON.parse(data) as { client_id: string; login_status: boolean };
      connection.clientId = parsed.client_id;
      connection.loginStatus = parsed.login_status;
      settled = true;
      clearTimeout(timer);
      connection.onFrame = undefined;
      connections.add(connection);
      resolve(connection);
    };
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path,
        method: 'GET',
        agent: false,
        ...(options.localAddress && { localAddress: options.localAddress }),
        headers: { accept: 'text/event-stream', ...headers },
      },
      (res) => {
        connection.res = res;
        connection.binding = (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!).find((c) => c.startsWith('cb_client='));
        if (res.statusCode !== 200) {
          res.resume();
          return fail(new Error(`HTTP ${res.statusCode} for ${path}`));
        }
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            handleFrame(connection, frame);
          }
        });
        res.on('close', () => {
          if (connections.delete(connection) && !closing) unexpectedCloses++;
          fail(new Error('closed before PB_CONNECT'));
        });
      },
    );
    req.on('error', fail);
    req.end();
  });
}

/** A plain request; answers status, the Location header and Set-Cookie values. */
function get(url: string, cookie?: string): Promise<{ status: number; location?: string; cookies: string[]; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'GET',
        agent: false,
        ...(options.localAddress && { localAddress: options.localAddress }),
        headers: { 'user-agent': 'bench-browser', ...(cookie && { cookie }) },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, location: res.headers.location, cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!), body }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The whole sign-in of one user through the real OpenID flow; resolves with the session cookie. */
async function signIn(connection: Connection, oId: string): Promise<string> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar.values()].join('; ') || undefined;
  const keep = (cookies: string[]) => {
    for (const c of cookies) jar.set(c.split('=')[0]!, c);
  };
  const loggedIn = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no login frame within 30 s')), 30_000);
    connection.onFrame = (event) => {
      if (event === 'login') {
        clearTimeout(timer);
        connection.onFrame = undefined;
        resolve();
      }
    };
  });
  loggedIn.catch(() => undefined);
  const page = await get(`${options.url}/${options.communityName}/login?client_id=${encodeURIComponent(connection.clientId!)}`, connection.binding);
  keep(page.cookies);
  if (page.status < 300 || page.status >= 400 || !page.location) throw new Error(`login page answered ${page.status}: ${page.body.slice(0, 200)}`);
  // The platform's consent page, confirmed at once by the simulator's `sim_user` shortcut.
  const provider = await get(`${page.location}&sim_user=${encodeURIComponent(oId)}`);
  if (provider.status < 300 || provider.status >= 400 || !provider.location) throw new Error(`OpenID provider answered ${provider.status}`);
  const callback = await get(provider.location, cookieHeader());
  keep(callback.cookies);
  if (callback.status !== 200) throw new Error(`callback answered ${callback.status}: ${callback.body.slice(0, 300)}`);
  await loggedIn;
  const session = cookieHeader();
  if (!session) throw new Error('the callback set no cookie');
  return session;
}

/** Runs `job` over `items` with at most `concurrency` at a time; collects failures. */
async function pool<T>(items: T[], concurrency: number, job: (item: T) => Promise<unknown>): Promise<{ failures: string[]; ms: number[] }> {
  const failures: string[] = [];
  const ms: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const started = performance.now();
        try {
          await job(item);
          ms.push(performance.now() - started);
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    }),
  );
  return { failures, ms };
}

const summary = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN };
};

const handlers = {
  async open({ count, concurrency }: { count: number; concurrency: number }) {
    const started = performance.now();
    const { failures, ms } = await pool(Array.from({ length: count }), concurrency, () => connect('/api/realtime'));
    return { opened: ms.length, failed: failures.length, failures: failures.slice(0, 5), elapsedMs: performance.now() - started, connectMs: summary(ms) };
  },
  async signin({ oIds, perUser, concurrency }: { oIds: string[]; perUser: number; concurrency: number }) {
    const started = performance.now();
    let opened = 0;
    let anonymousAfterCookie = 0;
    const { failures, ms } = await pool(oIds, concurrency, async (oId) => {
      const first = await connect('/api/realtime');
      opened++;
      const cookie = await signIn(first, oId);
      for (let i = 1; i < perUser; i++) {
        const more = await connect('/api/realtime', { cookie });
        opened++;
        if (!more.loginStatus) anonymousAfterCookie++;
      }
    });
    return {
      users: ms.length,
      opened,
      anonymousAfterCookie,
      failed: failures.length,
      failures: failures.slice(0, 5),
      elapsedMs: performance.now() - started,
      perUserMs: summary(ms),
    };
  },
  async baseline({ oIds, perUser, concurrency }: { oIds: string[]; perUser: number; concurrency: number }) {
    const started = performance.now();
    const paths = oIds.flatMap((oId) => Array.from({ length: perUser }, () => `/api/realtime?oId=${oId}`));
    const { failures, ms } = await pool(paths, concurrency, (path) => connect(path));
    return { opened: ms.length, failed: failures.length, failures: failures.slice(0, 5), elapsedMs: performance.now() - started, connectMs: summary(ms) };
  },
  async reset() {
    latencies = [];
    messages = 0;
    lastMessageAt = 0;
    for (const connection of connections) connection.heartbeats = 0;
    return {};
  },
  async stats({ keepLatencies }: { keepLatencies?: boolean }) {
    let withoutHeartbeat = 0;
    let fewestHeartbeats = Number.POSITIVE_INFINITY;
    for (const { heartbeats } of connections) {
      if (heartbeats === 0) withoutHeartbeat++;
      fewestHeartbeats = Math.min(fewestHeartbeats, heartbeats);
    }
    return {
      messages,
      lastMessageAt,
      open: connections.size,
      unexpectedCloses,
      withoutHeartbeat,
      fewestHeartbeats: connections.size > 0 ? fewestHeartbeats : 0,
      latency: summary(latencies),
      ...(keepLatencies && { latencies }),
    };
  },
  async close() {
    closing = true;
    for (const connection of connections) connection.res?.destroy();
    connections.clear();
    await sleep(100);
    closing = false;
    return {};
  },
};

type Handlers = typeof handlers;
/** What each command answers (besides `type`, and `error` when it failed). */
export type WorkerAnswers = { [K in keyof Handlers]: Awaited<ReturnType<Handlers[K]>> };

process.on('message', (command: { type: string }) => {
  if (!Object.hasOwn(handlers, command.type)) return process.send!({ type: `${command.type}:done`, error: `unknown command ${command.type}` });
  // The scenario sends each command with the fields its handler reads.
  const handler = handlers[command.type as keyof Handlers] as (command: unknown) => Promise<object>;
  handler(command).then(
    (result) => process.send!({ type: `${command.type}:done`, ...result }),
    (error: Error) => process.send!({ type: `${command.type}:done`, error: error.stack ?? String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.stdout.write(`READY ${JSON.stringify({ pid: process.pid, localAddress: options.localAddress })}\n`);
