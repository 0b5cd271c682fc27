// The community platform simulator in its own process, seeded with BENCH_USERS bench users.
// Prints `READY {"url"}`.
import { createSimulator } from '../src/community/simulator.js';
import { benchUsers } from './lib/users.js';

const simulator = createSimulator({ users: benchUsers(Number(process.env.BENCH_USERS ?? 1000)) });
const running = await simulator.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.stdout.write(`READY ${JSON.stringify({ url: running.url })}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void running.close().then(() => process.exit(0)));
}
